"""The Responses API's ``tools``: functions, deferred ones in one namespace per MCP server, ``tool_search``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from ..._names import SEARCH_TOOL_NAME

__all__ = ["ToolSearch", "flat", "namespaces", "to_responses_tools"]

ToolSearch = Literal["server", "client"]

#: Longest namespace description sent: the model searches by it, and it sits in every request.
_DESCRIPTION_CHARS = 600


def flat(entry: Mapping[str, Any]) -> dict[str, Any]:
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


def namespaces(deferred: Iterable[Mapping[str, Any]], *, defer: bool) -> list[dict[str, Any]]:
    """Functions grouped in one namespace per server, servers and functions in a stable order.

    Bare names (builtins) stay top-level functions. ``defer`` marks each function
    ``defer_loading`` (in the request's tools; not in a search's output).
    """
    top: list[dict[str, Any]] = []
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in deferred:
        function = flat(entry)
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
    functions = [flat(entry) for entry in tools]
    if not deferred:
        return functions
    search: dict[str, Any] = {"type": "tool_search", "execution": "server"}
    own = next((f for f in functions if f["name"] == SEARCH_TOOL_NAME), None)
    if tool_search == "client" and own is not None:
        functions.remove(own)
        search.update(execution="client", description=own.get("description") or "", parameters=own["parameters"])
    elif tool_search == "client" and client_search is not None:
        search = dict(client_search)
    return [*functions, *namespaces(deferred, defer=True), search]
