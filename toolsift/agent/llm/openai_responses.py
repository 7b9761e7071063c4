"""OpenAI Responses API: stateless requests that keep their prefix, and native tool search.

Every request carries the whole conversation (``store=False``, no
``previous_response_id``), so nothing lives on OpenAI's side between rounds
and the request is a pure function of the conversation: the same tools, the
same ``instructions`` and the same earlier items, byte for byte, which is
what OpenAI's prompt cache matches. What the model produced (reasoning
items, tool searches, calls) is echoed back verbatim from
``AssistantMessage.provider_blocks``.

Tools the turn defers (a model with ``defers_tools``) are declared with
``defer_loading: true`` inside one ``namespace`` per MCP server, beside a
``tool_search`` tool: the model sees each namespace's name and description
and loads the definitions it needs. The search runs on OpenAI's side by
default (``tool_search="server"``); ``tool_search="client"`` has toolsift's
own ``search_tools`` answer it instead. Either way only tools the turn's scope
allows are ever declared, and every call still passes the five layers.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import openai

from ..._exceptions import AgentError
from ..._names import SEARCH_TOOL_NAME
from .._messages import AssistantMessage, ContextMessage, Message, ToolCall, ToolMessage, Usage, UserMessage
from .._results import describe_result, result_text
from ._context import context_text

__all__ = ["OpenAIResponsesModel"]

ToolSearch = Literal["server", "client"]

#: The fields each output item keeps when it goes back as input: output-only ones
#: (``created_by``, say) are not accepted there. These are the keys of the SDK's input
#: TypedDicts (``ResponseOutputMessageParam``, ``ResponseFunctionToolCallParam``,
#: ``ResponseReasoningItemParam``, ``ToolSearchCall``, ``ResponseToolSearchOutputItemParamParam``),
#: written out so that older SDKs without them still import this module; a test keeps them equal.
_INPUT_FIELDS: dict[str, frozenset[str]] = {
    "message": frozenset({"content", "id", "phase", "role", "status", "type"}),
    "function_call": frozenset(
        {"arguments", "async", "call_id", "caller", "id", "name", "namespace", "status", "type"}
    ),
    "reasoning": frozenset({"content", "encrypted_content", "id", "status", "summary", "type"}),
    "tool_search_call": frozenset({"arguments", "call_id", "execution", "id", "status", "type"}),
    "tool_search_output": frozenset({"call_id", "execution", "id", "status", "tools", "type"}),
}

#: Longest namespace description sent: the model searches by it, and it sits in every request.
_DESCRIPTION_CHARS = 600


def _flat(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A function tool as the Responses API takes it (Chat Completions nests it under ``function``)."""
    if entry.get("type") == "function" and isinstance(entry.get("function"), Mapping):
        function = dict(entry["function"])
        return {
            "type": "function",
            "name": function["name"],
            "description": function.get("description") or "",
            "parameters": function.get("parameters") or {"type": "object", "properties": {}},
            "strict": function.get("strict", False),
        }
    return dict(entry)


def _namespace_of(name: str) -> str | None:
    """The MCP server a tool name belongs to (``server__tool``), or None for bare builtin names."""
    server, sep, rest = name.partition("__")
    return server if sep and server and rest else None


def _namespaces(deferred: Iterable[Mapping[str, Any]], *, defer: bool) -> list[dict[str, Any]]:
    """Functions grouped in one namespace per server, servers and functions in a stable order.

    Bare names (builtins) stay top-level functions. ``defer`` marks each function
    ``defer_loading`` (in the request's tools; not in a search's output).
    """
    top: list[dict[str, Any]] = []
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in deferred:
        function = _flat(entry)
        if defer:
            function["defer_loading"] = True
        server = _namespace_of(function["name"])
        if server is None:
            top.append(function)
        else:
            groups.setdefault(server, []).append(function)
    for server in sorted(groups):
        functions = sorted(groups[server], key=lambda f: str(f["name"]))
        names = ", ".join(str(f["name"]).partition("__")[2] for f in functions)
        description = f"Tools of the MCP server {server!r} ({len(functions)}): {names}"
        if len(description) > _DESCRIPTION_CHARS:
            description = description[: _DESCRIPTION_CHARS - 3] + "..."
        top.append({"type": "namespace", "name": server, "description": description, "tools": functions})
    return top


def to_responses_tools(
    tools: Sequence[Mapping[str, Any]],
    deferred: Sequence[Mapping[str, Any]] = (),
    *,
    tool_search: ToolSearch = "server",
    client_search: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The request's ``tools``: the turn's functions, then the deferred ones by namespace, then ``tool_search``.

    With ``tool_search="client"`` and ``search_tools`` among ``tools``, that
    function becomes the client-executed ``tool_search`` (its description and
    parameters), so the model has one way to search, answered by toolsift.
    Without it in the turn, OpenAI searches; but ``client_search``, the client
    tool search declared before, is kept when given: the conversation loaded
    tools by reference with it, and those exchanges must stay client searches
    whose output carries the definitions, in the same bytes.
    """
    functions = [_flat(entry) for entry in tools]
    if not deferred:
        return functions
    search: dict[str, Any] = {"type": "tool_search", "execution": "server"}
    own = next((f for f in functions if f["name"] == SEARCH_TOOL_NAME), None)
    if tool_search == "client" and own is not None:
        functions.remove(own)
        search.update(execution="client", description=own.get("description") or "", parameters=own["parameters"])
    elif tool_search == "client" and client_search is not None:
        search = dict(client_search)
    return [*functions, *_namespaces(deferred, defer=True), search]


def _arguments_text(call: ToolCall) -> str:
    return call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)


def _call_output(message: ToolMessage) -> str | list[dict[str, Any]]:
    """A tool result as ``function_call_output``: a string, or text and image parts when it has images."""
    parts = describe_result(message.result, images=True)
    prefix = "[tool error] " if message.result.is_error else ""
    if all(part.kind == "text" for part in parts):
        return prefix + "\n".join(part.text for part in parts)
    items: list[dict[str, Any]] = [{"type": "input_text", "text": prefix}] if prefix else []
    for part in parts:
        if part.kind == "image":
            items.append({"type": "input_image", "image_url": f"data:{part.mime_type};base64,{part.data}"})
        else:
            items.append({"type": "input_text", "text": part.text})
    return items


def _search_answer(message: ToolMessage) -> str:
    """What a client tool search that loaded nothing answered (a skill that forbids what it found, say), as
    the text that follows its empty output."""
    prefix = "[tool error] " if message.result.is_error else ""
    return f"The tool search loaded no tool. {SEARCH_TOOL_NAME} answered: {prefix}{result_text(message.result)}"


def _search_call_id(block: Mapping[str, Any]) -> str | None:
    """The id a client tool search is answered under, or None for any other item."""
    if block.get("type") != "tool_search_call" or block.get("execution") != "client":
        return None
    return str(block.get("call_id") or block.get("id") or "")


def _search_calls(history: Sequence[Message], *, client_search: bool = False) -> set[str]:
    """Call ids of the client-executed tool searches: the model's, and with ``client_search`` the
    conversation's own (:func:`_own_searches`)."""
    ids = {
        call_id
        for message in history
        if isinstance(message, AssistantMessage)
        for block in message.provider_blocks
        if (call_id := _search_call_id(block)) is not None
    }
    return ids | _own_searches(history) if client_search else ids


def _own_searches(history: Sequence[Message]) -> set[str]:
    """Call ids of the ``search_tools`` calls not made by this adapter: the conversation's own loading
    of a skill's tools by reference, which a client tool search carries as its output."""
    return {
        call.id
        for message in history
        if isinstance(message, AssistantMessage) and not _echoed(message)
        for call in message.tool_calls
        if call.name == SEARCH_TOOL_NAME
    }


def _echoed(message: AssistantMessage) -> bool:
    """Whether an answer goes back as its own output items (this adapter's), rather than rebuilt."""
    blocks = message.provider_blocks
    return bool(blocks) and all(block.get("type") in _INPUT_FIELDS for block in blocks)


def _as_input(item: Any) -> dict[str, Any]:
    """An output item as the input item that repeats it."""
    block: dict[str, Any] = (
        item.model_dump(mode="json", exclude_none=True) if hasattr(item, "model_dump") else dict(item)
    )
    fields = _INPUT_FIELDS.get(str(block.get("type")))
    return block if fields is None else {key: value for key, value in block.items() if key in fields}


def to_responses_input(
    history: Sequence[Message],
    loaded: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    *,
    client_search: bool = False,
) -> list[dict[str, Any]]:
    """The conversation as Responses input items.

    User text is a ``user`` message, text the conversation adds (a skill at
    ``/use``, server instructions) a ``developer`` message, an answer of this
    adapter its own output items verbatim (others' answers are rebuilt), a
    tool result a ``function_call_output`` or, for a client tool search, a
    ``tool_search_output`` listing the definitions in ``loaded`` by call id.
    With ``client_search`` (the request has a client-executed ``tool_search``
    in place of the ``search_tools`` function), a rebuilt ``search_tools`` call
    is a ``tool_search_call`` too: how the conversation loads a skill's tools.
    """
    searches = _search_calls(history, client_search=client_search)
    items: list[dict[str, Any]] = []
    for message in history:
        if isinstance(message, UserMessage):
            items.append({"type": "message", "role": "user", "content": message.text})
        elif isinstance(message, ContextMessage):
            items.append({"type": "message", "role": "developer", "content": context_text(message)})
        elif isinstance(message, AssistantMessage):
            # Another provider's blocks (a model switched mid-conversation) are rebuilt from text and calls.
            if _echoed(message):
                items += [dict(block) for block in message.provider_blocks]
                continue
            if message.text:
                items.append({"type": "message", "role": "assistant", "content": message.text})
            items += [
                {
                    "type": "tool_search_call",
                    "call_id": c.id,
                    "execution": "client",
                    "arguments": c.arguments,
                    "status": "completed",
                }
                if c.id in searches
                else {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": _arguments_text(c)}
                for c in message.tool_calls
            ]
        elif isinstance(message, ToolMessage):
            if message.call.id in searches:
                tools = (loaded or {}).get(message.call.id, ())
                items.append(
                    {
                        "type": "tool_search_output",
                        "call_id": message.call.id,
                        "execution": "client",
                        "status": "completed",
                        "tools": _namespaces(tools, defer=False),
                    }
                )
                if not tools:  # an output has no room for text: what the search said, and why, follows it
                    items.append({"type": "message", "role": "developer", "content": _search_answer(message)})
            else:
                items.append(
                    {"type": "function_call_output", "call_id": message.call.id, "output": _call_output(message)}
                )
    return items


def _parse_arguments(raw: object) -> dict[str, Any] | str:
    if isinstance(raw, dict):
        return raw
    text = raw if isinstance(raw, str) else json.dumps(raw)
    try:
        value = json.loads(text or "{}")
    except (json.JSONDecodeError, RecursionError):  # nesting past the parser's depth is no object either
        return text
    return value if isinstance(value, dict) else text


def _usage(response: Any) -> Usage | None:
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    details = getattr(usage, "input_tokens_details", None)
    return Usage(
        input_tokens=getattr(usage, "input_tokens", 0) or 0,
        cache_read_tokens=getattr(details, "cached_tokens", 0) or 0,
        cache_write_tokens=getattr(details, "cache_write_tokens", 0) or 0,
        output_tokens=getattr(usage, "output_tokens", 0) or 0,
    )


class OpenAIResponsesModel:
    """An OpenAI model behind the Responses API, as a :class:`~toolsift.agent.ChatModel`.

    Args:
        model: The model name.
        api_key: The key (``load_model`` reads ``OPENAI_API_KEY``).
        base_url: Another endpoint speaking the Responses API.
        client: A ready ``openai.AsyncOpenAI`` to use instead.
        strict: Ask for tools in strict mode (as :class:`~toolsift.agent.llm.openai.OpenAIChatModel`).
        prompt_cache_key: Sent with every request, so that OpenAI routes this model's requests
            to the same cache: ``True`` (the default) draws one key for this instance when the
            endpoint is api.openai.com, a string is used as given (a conversation or user id,
            never a secret; to share a cache across processes), ``False`` sends none.
        tool_search: Who answers the model's tool searches over deferred tools: ``"server"``
            (OpenAI, the default: no extra round trip, and it only ever sees the tools the
            turn's scope allows), ``"client"`` (toolsift's ``search_tools``, audited and within
            the unlock caps), or None for models without tool search (before ``gpt-5.4``):
            then the model defers nothing and toolsift's ``search_tools`` is the way to find tools.
        on_demand: With the hosted search, defer the global tools too (the model sees each
            server's namespace) and let the search load each tool when the model first calls
            it, a skill's tools included (named at ``/use`` rather than loaded): the tool list
            then never changes with the scope, and only the definitions the model uses join
            the prompt, at the point it used them. Each first use costs a search within the
            answer, no extra request.
        max_output_tokens: Upper bound of each answer (None: the model's own).
        reasoning_effort: ``reasoning.effort`` for reasoning models (None: the model's default).
        encrypted_reasoning: Ask for reasoning items with their encrypted content, which a
            stateless request must echo for the model to keep its reasoning across tool calls;
            turn off for an endpoint that rejects ``include``.
    """

    format = "openai-responses"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        strict: bool = False,
        prompt_cache_key: str | bool = True,
        tool_search: ToolSearch | None = "server",
        on_demand: bool = False,
        max_output_tokens: int | None = None,
        reasoning_effort: str | None = None,
        encrypted_reasoning: bool = True,
    ) -> None:
        if tool_search not in ("server", "client", None):
            raise AgentError(f"tool_search must be 'server', 'client' or None, not {tool_search!r}")
        self.model = model
        self.strict = strict
        self.tool_search = tool_search
        if on_demand and tool_search != "server":
            raise AgentError(f"on_demand needs OpenAI's hosted search (tool_search='server'), not {tool_search!r}")
        self.defers_tools = tool_search is not None
        self.loads_on_demand = on_demand
        self.max_output_tokens = max_output_tokens
        self.reasoning_effort = reasoning_effort
        self.encrypted_reasoning = encrypted_reasoning
        self._client = client or openai.AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0)
        self.prompt_cache_key: str | None = None
        if isinstance(prompt_cache_key, str):
            self.prompt_cache_key = prompt_cache_key
        elif prompt_cache_key and self._client.base_url.host == "api.openai.com":
            self.prompt_cache_key = f"toolsift-{uuid.uuid4().hex[:16]}"
        # What each client tool search loaded, by call id: computed once, so that a later
        # request repeats the same output item byte for byte even if the scope changed since.
        self._loaded: dict[str, list[dict[str, Any]]] = {}
        self._client_search: dict[str, Any] | None = None  # the client tool search declared last

    def request(
        self,
        instructions: str,
        history: Sequence[Message],
        tools: Sequence[Mapping[str, Any]],
        deferred: Sequence[Mapping[str, Any]] = (),
    ) -> dict[str, Any]:
        """The body of one ``responses.create`` call (also what tests check against the SDK's types)."""
        declared = to_responses_tools(
            tools,
            deferred if self.defers_tools else (),
            tool_search=self.tool_search or "server",
            client_search=self._client_search if _own_searches(history) else None,
        )
        search = next(
            (tool for tool in declared if tool == {**tool, "type": "tool_search", "execution": "client"}), None
        )
        client_search = search is not None
        self._client_search = search or self._client_search
        searches = _search_calls(history, client_search=client_search)
        for message in history:
            if isinstance(message, ToolMessage) and message.call.id in searches and message.call.id not in self._loaded:
                wanted = set(message.references)
                self._loaded[message.call.id] = [f for f in map(_flat, [*tools, *deferred]) if f["name"] in wanted]
        request: dict[str, Any] = {
            "model": self.model,
            "input": to_responses_input(history, self._loaded, client_search=client_search),
            "store": False,
        }
        if instructions:
            request["instructions"] = instructions
        if declared:
            request["tools"] = declared
        if self.prompt_cache_key:
            request["prompt_cache_key"] = self.prompt_cache_key
        if self.max_output_tokens is not None:
            request["max_output_tokens"] = self.max_output_tokens
        if self.reasoning_effort is not None:
            request["reasoning"] = {"effort": self.reasoning_effort}
        if self.encrypted_reasoning:
            request["include"] = ["reasoning.encrypted_content"]
        return request

    async def complete(
        self,
        instructions: str,
        history: Sequence[Message],
        tools: list[dict[str, Any]],
        deferred: Sequence[dict[str, Any]] = (),
    ) -> AssistantMessage:
        """One Responses API request with the whole conversation.

        Raises:
            AgentError: When the provider answers with an error, fails the response, or cannot be reached.
        """
        try:
            response = await self._client.responses.create(**self.request(instructions, history, tools, deferred))
        except openai.OpenAIError as exc:
            raise AgentError(f"OpenAI Responses request to model {self.model!r} failed: {exc}") from exc
        if getattr(response, "status", None) == "failed":
            error = getattr(response, "error", None)
            reason = getattr(error, "message", None) or "no reason given"
            raise AgentError(f"OpenAI model {self.model!r} failed the response: {reason}")
        return self._answer(response)

    def _answer(self, response: Any) -> AssistantMessage:
        blocks: list[dict[str, Any]] = []
        texts: list[str] = []
        calls: list[ToolCall] = []
        for item in response.output or ():
            block = _as_input(item)
            blocks.append(block)
            kind = block.get("type")
            if kind == "message":
                texts += [part["text"] for part in block.get("content", ()) if part.get("type") == "output_text"]
            elif kind == "function_call":
                # Functions keep their full exported names inside a namespace, so the name alone
                # resolves (aliases included) through the registry; the namespace is only grouping.
                calls.append(ToolCall(block["call_id"], block["name"], _parse_arguments(block.get("arguments"))))
            elif (search_id := _search_call_id(block)) is not None:
                calls.append(ToolCall(search_id, SEARCH_TOOL_NAME, _parse_arguments(block.get("arguments"))))
        return AssistantMessage(
            text="".join(texts) or None, tool_calls=tuple(calls), usage=_usage(response), provider_blocks=tuple(blocks)
        )
