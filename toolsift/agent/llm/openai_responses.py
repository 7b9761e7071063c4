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

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import openai

from ..._exceptions import AgentError
from ..._names import SEARCH_TOOL_NAME
from .._messages import AssistantMessage, Message, ToolCall, ToolMessage
from ._models import refusal, responses_features, warn_refused
from ._responses_input import (
    as_input,
    own_searches,
    parse_arguments,
    search_call_id,
    search_calls,
    to_responses_input,
    usage_of,
)
from ._responses_tools import ToolSearch, flat, to_responses_tools
from .prices import PriceTable, priced

__all__ = ["OpenAIResponsesModel"]


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
            (OpenAI: no extra round trip, and it only ever sees the tools the turn's scope
            allows), ``"client"`` (toolsift's ``search_tools``, audited and within the unlock
            caps), or None: the model defers nothing and toolsift's ``search_tools`` is the
            way to find tools. By default ``"server"`` from ``gpt-5.4`` on, None before.
        on_demand: With the hosted search, defer the global tools too (the model sees each
            server's namespace) and let the search load each tool when the model first calls
            it, a skill's tools included (named at ``/use`` rather than loaded): the tool list
            then never changes with the scope, and only the definitions the model uses join
            the prompt, at the point it used them. Each first use costs a search within the
            answer, no extra request. On by default with the hosted search; ``False`` opts out.
        When the endpoint refuses deferred tools (an older model, an OpenAI-compatible server),
        the adapter logs one line and goes on without them, every tool up front.
        max_output_tokens: Upper bound of each answer (None: the model's own).
        reasoning_effort: ``reasoning.effort`` for reasoning models (None: the model's default).
        encrypted_reasoning: Ask for reasoning items with their encrypted content, which a
            stateless request must echo for the model to keep its reasoning across tool calls;
            turn off for an endpoint that rejects ``include``.
        prices: The price table ``usage.cost`` is computed with (default: the one shipped).
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
        tool_search: ToolSearch | Literal["auto"] | None = "auto",
        on_demand: bool | None = None,
        max_output_tokens: int | None = None,
        reasoning_effort: str | None = None,
        encrypted_reasoning: bool = True,
        prices: PriceTable | None = None,
    ) -> None:
        if tool_search == "auto":
            tool_search = "server" if responses_features(model).tool_search or on_demand else None
        if on_demand is None:
            on_demand = tool_search == "server"
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
        self.price = (prices or PriceTable.default()).price("openai", model)
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
            client_search=self._client_search if own_searches(history) else None,
        )
        search = next(
            (tool for tool in declared if tool == {**tool, "type": "tool_search", "execution": "client"}), None
        )
        client_search = search is not None
        self._client_search = search or self._client_search
        searches = search_calls(history, client_search=client_search)
        for message in history:
            if isinstance(message, ToolMessage) and message.call.id in searches and message.call.id not in self._loaded:
                wanted = set(message.references)
                self._loaded[message.call.id] = [f for f in map(flat, [*tools, *deferred]) if f["name"] in wanted]
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
            if not (refusal(exc) and self.defers_tools and deferred):
                raise AgentError(f"OpenAI Responses request to model {self.model!r} failed: {exc}") from exc
            response = await self._without_search(exc, instructions, history, [*tools, *deferred])
        if getattr(response, "status", None) == "failed":
            error = getattr(response, "error", None)
            reason = getattr(error, "message", None) or "no reason given"
            raise AgentError(f"OpenAI model {self.model!r} failed the response: {reason}")
        return self._answer(response)

    async def _without_search(
        self, exc: BaseException, instructions: str, history: Sequence[Message], tools: list[dict[str, Any]]
    ) -> Any:
        """The request again with every tool up front, after the endpoint refused it with deferred tools.
        When that passes, deferring was what it refused: this model defers nothing from then on, and one
        log line says so; when it fails too, the first error stands and nothing changes."""
        before = (self.tool_search, self.defers_tools, self.loads_on_demand)
        self.tool_search, self.defers_tools, self.loads_on_demand = None, False, False
        try:
            response = await self._client.responses.create(**self.request(instructions, history, tools))
        except openai.OpenAIError:
            self.tool_search, self.defers_tools, self.loads_on_demand = before
            raise AgentError(f"OpenAI Responses request to model {self.model!r} failed: {exc}") from exc
        warn_refused("OpenAI", self.model, f"deferred tools (tool_search={before[0]!r})", exc)
        return response

    def _answer(self, response: Any) -> AssistantMessage:
        blocks: list[dict[str, Any]] = []
        texts: list[str] = []
        calls: list[ToolCall] = []
        for item in response.output or ():
            block = as_input(item)
            blocks.append(block)
            kind = block.get("type")
            if kind == "message":
                texts += [part["text"] for part in block.get("content", ()) if part.get("type") == "output_text"]
            elif kind == "function_call":
                # Functions keep their full exported names inside a namespace, so the name alone
                # resolves (aliases included) through the registry; the namespace is only grouping.
                calls.append(ToolCall(block["call_id"], block["name"], parse_arguments(block.get("arguments"))))
            elif (search_id := search_call_id(block)) is not None:
                calls.append(ToolCall(search_id, SEARCH_TOOL_NAME, parse_arguments(block.get("arguments"))))
        return AssistantMessage(
            text="".join(texts) or None,
            tool_calls=tuple(calls),
            usage=priced(usage_of(response), self.price),
            provider_blocks=tuple(blocks),
        )
