"""``register_mcp_tools``: start every configured server and put its tools in the registry.

Sessions need an owner for their tasks, so this is an async context manager
rather than a plain function: ``async with register_mcp_tools(config, registry)
as sessions:`` starts everything, and leaving the block stops everything.

Lazy servers (``lazy: true``) are not connected at boot and register nothing
until their first need: a server's tool list can only be known by asking the
server, and connecting once at boot just to list would spend exactly the
start-up cost ``lazy`` exists to avoid. A need is a direct call
(``McpSession.call_tool``), a skill or gateway pattern naming the server
(``McpSessionGroup.start_lazy``), or a tool search, which has to know every
searchable server's tools.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from ..config import ServerConfig, ToolsiftConfig
from ._group import McpSessionGroup
from ._options import SessionOptions
from ._state import SessionState

if TYPE_CHECKING:
    from ..registry import ToolRegistry

__all__ = ["default_session_options", "register_mcp_tools"]

logger = logging.getLogger("toolsift.mcp_sessions")

ServersLike = ToolsiftConfig | Mapping[str, ServerConfig] | Iterable[ServerConfig]


def _servers(config: ServersLike) -> list[ServerConfig]:
    if isinstance(config, ToolsiftConfig):
        return list(config.servers.values())
    if isinstance(config, Mapping):
        return [server if server.name == name else server.with_name(name) for name, server in config.items()]
    return list(config)


def default_session_options(config: ServersLike, options: SessionOptions | None = None) -> SessionOptions:
    """``options`` when given, else the options a config implies (its ``workspace`` and ``roots`` as roots)."""
    if options is not None:
        return options
    return SessionOptions.for_config(config) if isinstance(config, ToolsiftConfig) else SessionOptions()


@asynccontextmanager
async def register_mcp_tools(
    config: ServersLike,
    registry: ToolRegistry,
    *,
    options: SessionOptions | None = None,
) -> AsyncIterator[McpSessionGroup]:
    """Start every enabled server in parallel and register its tools; stop them all on exit.

    Tools of ``internalOnly: false`` servers are registered as global tools,
    those of internal servers are catalogued as internal ones. A server that
    fails to start is left in state ``error`` (its row in the status table says
    why) and the others go on. One summary line per server is logged.

    Args:
        config: A loaded ``ToolsiftConfig``, or servers by name, or a list of servers.
        registry: Where the tools go.
        options: Session settings; by default, the config's ``workspace`` (when
            the file sets one) is offered to servers as their MCP root.

    Yields:
        Every session by server name, internal ones included, as an
        :class:`McpSessionGroup` (a mapping that can also add, replace and retire
        sessions later).
    """
    async with McpSessionGroup(registry, options=default_session_options(config, options)) as group:
        await group.start_all(_servers(config))
        for row in group.status():
            level = logging.WARNING if row.state is SessionState.ERROR else logging.INFO
            logger.log(level, "MCP %s", row.line())
        for name, reason in group.skipped.items():
            logger.info("MCP %s: skipped (%s)", name, reason)
        yield group
