"""Anthropic's mid-conversation tool changes, as the loopback provider applies them.

A ``role: "system"`` message may carry ``tool_addition`` and ``tool_removal`` blocks (the installed SDK's
``BetaRequestToolAdditionBlockParam`` / ``BetaRequestToolRemovalBlockParam``), each naming one tool by
a ``tool_reference`` (``{"type": "tool_reference", "name": ...}``); they need the
``mid-conversation-tool-changes-2026-07-01`` beta header, and a reference names a tool the request defines
(https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages). From a
removal on, the tool is not offered: a model does not call it, and a search does not find it, until an
addition offers it again (a deferred tool's definition then loads at the addition, as a
``tool_reference`` loads it). Its bytes stay in the prompt and are read as input like any other; what
leaves is the tool the model is offered, which is what ``tool_tokens`` counts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BETA", "Offered", "changed_tool", "offered", "references", "refused_change"]

BETA = "mid-conversation-tool-changes-2026-07-01"
CHANGES = ("tool_addition", "tool_removal")


@dataclass
class Offered:
    """The tools offered at the end of a prompt: up front (``tools``), loaded in the messages, withdrawn."""

    up_front: dict[str, dict[str, Any]] = field(default_factory=dict)
    loaded: dict[str, dict[str, Any]] = field(default_factory=dict)
    withdrawn: set[str] = field(default_factory=set)


def references(block: Any) -> Iterator[str]:
    """Names of the tools a content block loads: ``tool_reference`` anywhere inside it (a tool result, a
    search result), or the tool a ``tool_addition`` offers; a ``tool_removal`` loads nothing."""
    if isinstance(block, dict):
        if block.get("type") in CHANGES:
            name = changed_tool(block)
            if block["type"] == "tool_addition" and name is not None:
                yield name
            return
        if block.get("type") == "tool_reference":
            yield block["tool_name"]
        for value in block.values():
            yield from references(value)
    elif isinstance(block, list):
        for value in block:
            yield from references(value)


def changed_tool(block: dict[str, Any]) -> str | None:
    """The tool a ``tool_addition`` / ``tool_removal`` block names by reference (None: another form)."""
    tool = block.get("tool") or {}
    return str(tool["name"]) if tool.get("type") == "tool_reference" else None


def offered(body: dict[str, Any], plain: Any) -> Offered:
    """What the prompt of a Messages request offers the model at its end (``plain``: a block without its
    breakpoints, as the cache sees it)."""
    state = Offered()
    deferred: dict[str, dict[str, Any]] = {}
    for tool in body.get("tools") or []:
        (deferred if tool.get("defer_loading") else state.up_front)[tool["name"]] = plain(tool)
    declared = dict(state.up_front)
    for message in body.get("messages") or []:
        content = message["content"]
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "tool_removal" and (name := changed_tool(part)) is not None:
                state.up_front.pop(name, None)
                state.loaded.pop(name, None)
                state.withdrawn.add(name)
                continue
            for name in references(part):
                state.withdrawn.discard(name)
                if name in deferred:
                    state.loaded[name] = deferred[name]
                elif name in declared:
                    state.up_front[name] = declared[name]
    return state


def refused_change(body: dict[str, Any], beta_header: str) -> str | None:
    """Why a request with tool changes is refused (None: it is not): without the beta header, or with a
    change naming a tool the request's ``tools`` do not define."""
    betas = {beta.strip() for beta in beta_header.split(",")}
    defined = {tool.get("name") for tool in body.get("tools") or []}
    for message in body.get("messages") or []:
        content = message["content"]
        for part in content if isinstance(content, list) else []:
            if part.get("type") not in CHANGES:
                continue
            if BETA not in betas:
                return f"messages: {part['type']} blocks need the anthropic-beta header {BETA!r}"
            if (name := changed_tool(part)) is not None and name not in defined:
                return f"messages: {part['type']} names {name!r}, which the request's tools do not define"
    return None
