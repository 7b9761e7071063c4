"""The conversation as Responses input items, and the answer's output items as they go back.

Every request carries the whole conversation, so an answer of this adapter goes back as its own
output items, verbatim but for output-only fields; other answers are rebuilt from text and calls.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ..._names import SEARCH_TOOL_NAME
from .._messages import AssistantMessage, ContextMessage, Message, ToolCall, ToolMessage, Usage, UserMessage
from .._results import describe_result, result_text
from ._context import context_text
from ._responses_tools import namespaces

__all__ = [
    "INPUT_FIELDS",
    "as_input",
    "own_searches",
    "parse_arguments",
    "search_call_id",
    "search_calls",
    "to_responses_input",
    "usage_of",
]

#: The fields each output item keeps when it goes back as input: output-only ones
#: (``created_by``, say) are not accepted there. These are the keys of the SDK's input
#: TypedDicts (``ResponseOutputMessageParam``, ``ResponseFunctionToolCallParam``,
#: ``ResponseReasoningItemParam``, ``ToolSearchCall``, ``ResponseToolSearchOutputItemParamParam``),
#: written out so that older SDKs without them still import this module; a test keeps them equal.
INPUT_FIELDS: dict[str, frozenset[str]] = {
    "message": frozenset({"content", "id", "phase", "role", "status", "type"}),
    "function_call": frozenset(
        {"arguments", "async", "call_id", "caller", "id", "name", "namespace", "status", "type"}
    ),
    "reasoning": frozenset({"content", "encrypted_content", "id", "status", "summary", "type"}),
    "tool_search_call": frozenset({"arguments", "call_id", "execution", "id", "status", "type"}),
    "tool_search_output": frozenset({"call_id", "execution", "id", "status", "tools", "type"}),
}


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


def search_call_id(block: Mapping[str, Any]) -> str | None:
    """The id a client tool search is answered under, or None for any other item."""
    if block.get("type") != "tool_search_call" or block.get("execution") != "client":
        return None
    return str(block.get("call_id") or block.get("id") or "")


def search_calls(history: Sequence[Message], *, client_search: bool = False) -> set[str]:
    """Call ids of the client-executed tool searches: the model's, and with ``client_search`` the
    conversation's own (:func:`own_searches`)."""
    ids = {
        call_id
        for message in history
        if isinstance(message, AssistantMessage)
        for block in message.provider_blocks
        if (call_id := search_call_id(block)) is not None
    }
    return ids | own_searches(history) if client_search else ids


def own_searches(history: Sequence[Message]) -> set[str]:
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
    return bool(blocks) and all(block.get("type") in INPUT_FIELDS for block in blocks)


def as_input(item: Any) -> dict[str, Any]:
    """An output item as the input item that repeats it."""
    block: dict[str, Any] = (
        item.model_dump(mode="json", exclude_none=True) if hasattr(item, "model_dump") else dict(item)
    )
    fields = INPUT_FIELDS.get(str(block.get("type")))
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
    searches = search_calls(history, client_search=client_search)
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
            items += _tool_output(message, searches, loaded)
    return items


def parse_arguments(raw: object) -> dict[str, Any] | str:
    if isinstance(raw, dict):
        return raw
    text = raw if isinstance(raw, str) else json.dumps(raw)
    try:
        value = json.loads(text or "{}")
    except (json.JSONDecodeError, RecursionError):  # nesting past the parser's depth is no object either
        return text
    return value if isinstance(value, dict) else text


def usage_of(response: Any) -> Usage | None:
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


def _tool_output(
    message: ToolMessage, searches: Collection[str], loaded: Mapping[str, Sequence[Mapping[str, Any]]] | None
) -> list[dict[str, Any]]:
    """A tool result as input items: a client tool search's output (the definitions it loaded), or a call's."""
    if message.call.id not in searches:
        return [{"type": "function_call_output", "call_id": message.call.id, "output": _call_output(message)}]
    tools = (loaded or {}).get(message.call.id, ())
    output = {
        "type": "tool_search_output",
        "call_id": message.call.id,
        "execution": "client",
        "status": "completed",
        "tools": namespaces(tools, defer=False),
    }
    if tools:
        return [output]
    # An output has no room for text: what the search said, and why, follows it.
    return [output, {"type": "message", "role": "developer", "content": _search_answer(message)}]
