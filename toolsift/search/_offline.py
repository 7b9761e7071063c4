"""Indexing a tool list without servers or sessions: how users measure search on their own catalogues.

A catalogue is often at hand as data (a recorded ``tools/list``, a JSON file of
function declarations) rather than as running servers. :func:`index_tools`
puts such a list in a registry of its own, as a session would register it, and
returns the same :class:`SearchIndex` that ``search_tools`` uses, so what it
ranks is what an agent would get.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, final

import mcp.types as types
from pydantic import ValidationError

from ..config import StdioServer
from ..mcp_sessions._internal import tool_spec
from ..registry import ToolContext, ToolRegistry, ToolResult, ToolSpec
from ._bm25 import SearchBackend
from ._index import BackendName, SearchIndex

__all__ = ["ToolListing", "index_tools"]

#: One tool as a list gives it: an MCP ``Tool``, its JSON form (``name``, ``description``, ``inputSchema``, ...),
#: or a ``ToolSpec`` whose name is already ``server__tool``.
ToolListing = types.Tool | Mapping[str, Any] | ToolSpec


@final
class _Listed:
    """A listed tool in the offline registry: ranked, never called."""

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult.error(f"{self.spec.name} is only indexed here (index_tools); it cannot be called")


def _spec(server: str, position: int, tool: ToolListing) -> ToolSpec:
    if isinstance(tool, ToolSpec):
        return tool
    if isinstance(tool, Mapping):
        listing = dict(tool)
        try:
            tool = types.Tool.model_validate(listing)
        except ValidationError as exc:
            name = listing.get("name", f"#{position}")
            raise ValueError(f"tool {name!r} of server {server!r} is not an MCP tool: {exc}") from exc
    return tool_spec(StdioServer(command="offline").with_name(server), tool)


def index_tools(
    tools: Iterable[ToolListing] | Mapping[str, Iterable[ToolListing]],
    *,
    server: str = "tools",
    descriptions: Mapping[str, str] | None = None,
    backend: BackendName | SearchBackend = "bm25",
) -> SearchIndex:
    """A search index over a tool list, built without starting any server.

    Query it with ``index.search(query, limit=k)``: a list of :class:`SearchHit`,
    best first; ``hit.names`` holds every tool the hit stands for (the same tool
    on several servers is one hit), so a hit is right when ``hit.names`` holds an
    expected tool. ``hit.document.local_name`` is its name on its server.

    Args:
        tools: The tools of one server (named ``server``), or server name -> its tools.
        server: The server name when ``tools`` is one list.
        descriptions: Server name -> what the server says of itself (its description,
            its handshake's instructions); indexed with each of its tools.
        backend: ``bm25`` (default), ``semantic``, ``hybrid`` or any :class:`SearchBackend`.

    Raises:
        ValueError: A tool is neither an MCP tool nor its JSON form.
        InvalidToolName: A server or tool name breaks toolsift's naming rules.
        ConfigError: Unknown backend, or a semantic one without its package.
    """
    by_server = tools if isinstance(tools, Mapping) else {server: tools}
    registry = ToolRegistry()
    for name, listed in by_server.items():
        registry.replace_server(name, [_Listed(_spec(name, i, tool)) for i, tool in enumerate(listed)], internal=True)
    return SearchIndex(registry, backend=backend, server_descriptions=dict(descriptions or {}))
