"""Anthropic Messages API, with prompt-cache breakpoints and native tool search.

Anthropic caches the request prefix (tools, then system, then messages) only up to the blocks marked
with ``cache_control`` (at most four), and a breakpoint finds an earlier entry only at its own block or
one of the 19 blocks before it (https://platform.claude.com/docs/en/build-with-claude/prompt-caching).
Each request here marks:

1. the last tool that is loaded up front (tool definitions change least); or, when the list grew by
   more than the lookback since an earlier request, the tool where that earlier list ended, so that
   the grown request still reads it (the system prompt's breakpoint then covers the whole list),
2. the system prompt,
3. the last block of the last message (what the next request will read back), and
4. the last block of the user turn before the latest answer: where the previous request put its
   breakpoint 3, so the next request reads the whole previous prompt even when the answer in
   between (many parallel tool calls and results) is longer than the 20-block lookback;
5. and when the request starts with a prompt an earlier request put a breakpoint on, beyond the reach
   of these (the tool list is back to what it was several requests ago), that block, in place of the
   earliest one before it (see ``_entries.EarlierEntries``).

Tool search (https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool): tools sent
with ``defer_loading: true`` stay out of the prompt until a ``tool_reference`` loads them, in the
conversation where it occurs, so finding a tool appends to the prompt instead of rewriting its start.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Literal

import anthropic

from ..._exceptions import AgentError
from .._messages import AssistantMessage, ContextMessage, Message, ToolCall, ToolMessage, Usage, UserMessage
from .._results import describe_result
from .._tool_list import common_length
from ._context import context_text
from ._entries import EarlierEntries

__all__ = ["AnthropicChatModel"]

ToolSearch = Literal["client", "bm25", "regex"]
# The server-side search tools of the installed SDK (ToolSearchToolBm25_20251119Param, ...Regex...).
_SEARCH_TOOLS: dict[str, dict[str, str]] = {
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}
# Blocks only the provider can produce: an answer carrying them is sent back exactly as it came.
_SERVER_BLOCKS = frozenset({"server_tool_use", "tool_search_tool_result"})
_BREAKPOINT = {"type": "ephemeral"}
# A breakpoint finds an earlier cache entry at its own block or one of the 19 before it.
_LOOKBACK = 20
# How many tool lists sent earlier are remembered to find where a grown list's cached part ends.
_REMEMBERED_LISTS = 32


def _tool_result(message: ToolMessage, references: Sequence[str]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for part in describe_result(message.result, images=True):
        if part.kind == "image":
            content.append(
                {"type": "image", "source": {"type": "base64", "media_type": part.mime_type, "data": part.data}}
            )
        else:
            content.append({"type": "text", "text": part.text})
    content += [{"type": "tool_reference", "tool_name": name} for name in references]
    return {
        "type": "tool_result",
        "tool_use_id": message.call.id,
        "content": content,
        "is_error": message.result.is_error,
    }


def _assistant_blocks(message: AssistantMessage, references: frozenset[str]) -> list[dict[str, Any]]:
    if any(block.get("type") in _SERVER_BLOCKS for block in message.provider_blocks):
        return [_referencing(dict(block), references) for block in message.provider_blocks]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": message.text}] if message.text else []
    blocks += [
        {
            "type": "tool_use",
            "id": c.id,
            "name": c.name,
            "input": c.arguments if isinstance(c.arguments, dict) else {"_raw": c.arguments},
        }
        for c in message.tool_calls
    ]
    return blocks


def _referencing(block: dict[str, Any], references: frozenset[str]) -> dict[str, Any]:
    """A server tool search result as sent back: its references to tools the request no longer defers are
    left out (the scope stopped allowing them; the provider loads only what the request defines)."""
    found = block.get("content")
    if block.get("type") != "tool_search_tool_result" or not isinstance(found, dict):
        return block
    kept = [ref for ref in found.get("tool_references") or () if ref.get("tool_name") in references]
    if kept == list(found.get("tool_references") or ()):
        return block
    return {**block, "content": {**found, "tool_references": kept}}


def to_anthropic_messages(
    history: Sequence[Message], *, references: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """The conversation as Messages API turns, every content a list of blocks (a breakpoint needs a block).

    Roles alternate as Anthropic requires: user text, context and tool results that follow one another
    share one user turn, tool results first; answers that follow one another (an answer, then the
    conversation's own ``search_tools`` call loading a skill's tools) share one assistant turn. A tool
    result carries a ``tool_reference`` for each of its message's ``references`` that is in
    ``references`` (the deferred tools the request defines), and so does a server tool search's result:
    a tool the scope no longer allows is no longer deferred, and a reference to it is left out.
    """
    messages: list[dict[str, Any]] = []

    def user_turn() -> list[dict[str, Any]]:
        if not messages or messages[-1]["role"] != "user":
            messages.append({"role": "user", "content": []})
        content: list[dict[str, Any]] = messages[-1]["content"]
        return content

    for message in history:
        if isinstance(message, UserMessage):
            user_turn().append({"type": "text", "text": message.text})
        elif isinstance(message, ContextMessage):
            user_turn().append({"type": "text", "text": context_text(message)})
        elif isinstance(message, AssistantMessage):
            if messages and messages[-1]["role"] == "assistant":  # one turn, as the API would combine them
                messages[-1]["content"].extend(_assistant_blocks(message, references))
            else:
                messages.append({"role": "assistant", "content": _assistant_blocks(message, references)})
        elif isinstance(message, ToolMessage):
            content = user_turn()
            at = next((i for i, block in enumerate(content) if block["type"] != "tool_result"), len(content))
            content.insert(at, _tool_result(message, [n for n in message.references if n in references]))
    return messages


def _mark_last(blocks: list[dict[str, Any]]) -> None:
    """Put a breakpoint on the last block (a copy: the blocks may be shared with the caller)."""
    if blocks:
        blocks[-1] = {**blocks[-1], "cache_control": dict(_BREAKPOINT)}


def _mark_messages(messages: list[dict[str, Any]]) -> None:
    """Breakpoints 3 and 4: the last message, and the user turn before the latest answer."""
    if not messages:
        return
    _mark_last(messages[-1]["content"])
    answers = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    if answers and answers[-1] > 0 and messages[answers[-1] - 1]["role"] == "user":
        _mark_last(messages[answers[-1] - 1]["content"])


def _usage(usage: anthropic.types.Usage) -> Usage:
    read = usage.cache_read_input_tokens or 0
    written = usage.cache_creation_input_tokens or 0
    return Usage(usage.input_tokens + read + written, read, written, usage.output_tokens)


class AnthropicChatModel:
    """A Claude model as a :class:`~toolsift.agent.ChatModel`.

    Args:
        model: The model name.
        api_key: The key (``load_model`` reads ``ANTHROPIC_API_KEY``).
        base_url: Another endpoint.
        client: A ready ``anthropic.AsyncAnthropic`` to use instead.
        max_tokens: Upper bound of each answer.
        cache: Mark prompt-cache breakpoints (tools, system, the last turns).
        tool_search: How the tools the scope allows but the turn does not show are offered.
            ``"client"`` (the default): sent with ``defer_loading: true``, and toolsift's own
            ``search_tools`` loads what it finds with ``tool_reference`` blocks in its result, so a
            search ranks and checks the scope as everywhere else, is audited, and appends to the
            prompt instead of changing the tool list. ``"bm25"`` / ``"regex"``: Anthropic's
            server-side search tool also searches the deferred tools. ``None``: nothing is
            deferred, for models without tool search (before the Claude 4.5 family).
        on_demand: With a server-side search (``"bm25"``, ``"regex"``), defer the global tools too
            and let the search load each tool when the model first calls it, a skill's tools
            included (named at ``/use`` rather than loaded): the tool list then never changes
            with the scope, and only the definitions the model uses join the prompt.
    """

    format = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: anthropic.AsyncAnthropic | None = None,
        max_tokens: int = 4096,
        cache: bool = True,
        tool_search: ToolSearch | None = "client",
        on_demand: bool = False,
    ) -> None:
        if tool_search is not None and tool_search not in ("client", *_SEARCH_TOOLS):
            raise AgentError(f"tool_search must be 'client', 'bm25', 'regex' or None, not {tool_search!r}")
        if on_demand and tool_search not in _SEARCH_TOOLS:
            raise AgentError(
                f"on_demand needs a server-side search (tool_search='bm25' or 'regex'), not {tool_search!r}"
            )
        self.loads_on_demand = on_demand
        self.model = model
        self.max_tokens = max_tokens
        self.cache = cache
        self.tool_search = tool_search
        self._client = client or anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0)
        self._sent_tools: OrderedDict[tuple[str, ...], None] = OrderedDict()
        self._entries = EarlierEntries()

    @property
    def defers_tools(self) -> bool:
        """Whether the conversation should pass the tools it does not show as ``deferred``."""
        return self.tool_search is not None

    def request(
        self,
        instructions: str,
        history: Sequence[Message],
        tools: list[dict[str, Any]],
        deferred: Sequence[dict[str, Any]] = (),
    ) -> dict[str, Any]:
        """The Messages API request :meth:`complete` sends (a ``MessageCreateParams``)."""
        shown = [dict(tool) for tool in tools]
        if self.tool_search in _SEARCH_TOOLS:
            shown.append(dict(_SEARCH_TOOLS[self.tool_search]))
        names = {tool["name"] for tool in shown}
        hidden = [{**tool, "defer_loading": True} for tool in deferred if tool["name"] not in names]
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": to_anthropic_messages(history, references=frozenset(t["name"] for t in hidden)),
        }
        if instructions:
            request["system"] = [{"type": "text", "text": instructions}]
        if self.cache:
            self._mark_tools(shown, has_system=bool(instructions))
            _mark_last(request.get("system", []))
            _mark_messages(request["messages"])
        if shown or hidden:
            request["tools"] = shown + hidden
        if self.cache:
            self._entries.mark(request)
        return request

    def _mark_tools(self, shown: list[dict[str, Any]], *, has_system: bool) -> None:
        """Breakpoint 1: the last tool, or where an earlier list ended when the list grew past the lookback.

        Tools are appended at the end (a skill's tools put up front, say); when more than the lookback
        are appended at once, a breakpoint on the last tool no longer reaches back to the entry the
        earlier request wrote, and the whole prompt would be written again.
        """
        key = tuple(json.dumps(tool, sort_keys=True) for tool in shown)
        shared = max((common_length(key, earlier) for earlier in self._sent_tools), default=0)
        self._sent_tools[key] = None
        self._sent_tools.move_to_end(key)
        while len(self._sent_tools) > _REMEMBERED_LISTS:
            self._sent_tools.popitem(last=False)
        # The system prompt's breakpoint sits one block after the last tool: it reaches 18 tools back.
        grown = shared > 0 and len(shown) - shared > _LOOKBACK - 2
        if grown:
            shown[shared - 1] = {**shown[shared - 1], "cache_control": dict(_BREAKPOINT)}
        if not grown or not has_system:
            _mark_last(shown)

    async def complete(
        self,
        instructions: str,
        history: Sequence[Message],
        tools: list[dict[str, Any]],
        deferred: Sequence[dict[str, Any]] = (),
    ) -> AssistantMessage:
        """One Messages API request; ``deferred`` tools go with ``defer_loading`` (see ``tool_search``).

        Raises:
            AgentError: When the provider answers with an error or cannot be reached.
        """
        request = self.request(instructions, history, tools, deferred if self.defers_tools else ())
        try:
            response = await self._client.messages.create(**request)
        except anthropic.AnthropicError as exc:
            raise AgentError(f"Anthropic request to model {self.model!r} failed: {exc}") from exc
        text = "".join(b.text for b in response.content if b.type == "text") or None
        calls = tuple(
            ToolCall(id=b.id, name=b.name, arguments=dict(b.input)) for b in response.content if b.type == "tool_use"
        )
        blocks: tuple[dict[str, Any], ...] = ()
        if any(b.type in _SERVER_BLOCKS for b in response.content):
            blocks = tuple(b.model_dump(mode="json", exclude_none=True) for b in response.content)
        return AssistantMessage(text=text, tool_calls=calls, usage=_usage(response.usage), provider_blocks=blocks)
