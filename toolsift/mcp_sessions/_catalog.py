"""What a server offers: its tools, resources, resource templates and prompts, every page of them.

Servers advertise capabilities they do not implement; a list that fails with a
JSON-RPC error is logged as a warning and treated as empty, so one broken
feature does not cost the session the others. Only a failing ``tools/list``
that is not "method not found" is an error: without its tools a session has
nothing to offer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol, TypeVar

import mcp.types as types
from mcp import Client, MCPError

__all__ = ["ServerCatalog", "list_catalog", "list_prompts", "list_resources", "list_tools"]

logger = logging.getLogger("toolsift.mcp_sessions")

# A paginator that never ends must not hang the session.
_MAX_PAGES = 1000

T = TypeVar("T")
P = TypeVar("P", bound="_Page")


class _Page(Protocol):
    @property
    def next_cursor(self) -> str | None: ...


@dataclass(frozen=True)
class ServerCatalog:
    """Everything a server listed when it was last asked.

    Attributes:
        tools: Tools, in the server's order.
        resources: Concrete resources.
        resource_templates: URI templates of parameterised resources.
        prompts: Prompt templates.
    """

    tools: tuple[types.Tool, ...] = ()
    resources: tuple[types.Resource, ...] = ()
    resource_templates: tuple[types.ResourceTemplate, ...] = ()
    prompts: tuple[types.Prompt, ...] = ()

    @cached_property
    def task_support(self) -> dict[str, str]:
        """``execution.taskSupport`` of the tools that state one, by tool name."""
        return {
            tool.name: tool.execution.task_support
            for tool in self.tools
            if tool.execution is not None and tool.execution.task_support is not None
        }

    def can_run_as_task(self, tool: str) -> bool:
        """Whether the server runs tool ``tool`` as a task when asked (``taskSupport`` optional or required)."""
        return self.task_support.get(tool) in ("optional", "required")


async def _paginate(
    server: str, what: str, fetch: Callable[[str | None], Awaitable[P]], items: Callable[[P], Sequence[T]]
) -> list[T]:
    collected: list[T] = []
    seen: set[str] = set()
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await fetch(cursor)
        collected.extend(items(page))
        cursor = page.next_cursor
        if cursor is None:
            return collected
        if cursor in seen:
            logger.warning(
                "MCP server %r repeated the %s cursor %r; keeping the %d items listed so far",
                server,
                what,
                cursor,
                len(collected),
            )
            return collected
        seen.add(cursor)
    logger.warning(
        "MCP server %r returned more than %d pages of %s; keeping the first %d items",
        server,
        _MAX_PAGES,
        what,
        len(collected),
    )
    return collected


async def _tolerant(server: str, what: str, listing: Awaitable[list[T]]) -> list[T]:
    try:
        return await listing
    except MCPError as exc:
        # A server that advertises a list it never implemented (method not found) does so at every start and
        # loses nothing: said once at INFO. A listing that failed otherwise is a fault worth a warning.
        level = logging.INFO if exc.code == types.METHOD_NOT_FOUND else logging.WARNING
        logger.log(
            level,
            "MCP server %r advertises %s but listing them failed (JSON-RPC error %d: %s); treating the list as empty",
            server,
            what,
            exc.code,
            exc.message,
        )
        return []


async def list_tools(client: Client, server: str) -> list[types.Tool]:
    """Every tool the server lists (all pages); empty when it has no tools capability.

    Raises:
        MCPError: ``tools/list`` failed for a reason other than "method not found".
    """
    if client.server_capabilities.tools is None:
        return []
    try:
        return await _paginate(
            server,
            "tools",
            lambda cursor: client.list_tools(cursor=cursor, cache_mode="refresh"),
            lambda page: page.tools,
        )
    except MCPError as exc:
        if exc.code != types.METHOD_NOT_FOUND:
            raise
        logger.warning(
            "MCP server %r advertises tools but does not implement tools/list (%s); it offers no tools",
            server,
            exc.message,
        )
        return []


async def list_resources(client: Client, server: str) -> tuple[list[types.Resource], list[types.ResourceTemplate]]:
    """Resources and resource templates, or two empty lists when the server has none."""
    if client.server_capabilities.resources is None:
        return [], []
    resources = await _tolerant(
        server,
        "resources",
        _paginate(
            server,
            "resources",
            lambda cursor: client.list_resources(cursor=cursor, cache_mode="refresh"),
            lambda page: page.resources,
        ),
    )
    templates = await _tolerant(
        server,
        "resource templates",
        _paginate(
            server,
            "resource templates",
            lambda cursor: client.list_resource_templates(cursor=cursor, cache_mode="refresh"),
            lambda page: page.resource_templates,
        ),
    )
    return resources, templates


async def list_prompts(client: Client, server: str) -> list[types.Prompt]:
    """Prompts, or an empty list when the server has none."""
    if client.server_capabilities.prompts is None:
        return []
    return await _tolerant(
        server,
        "prompts",
        _paginate(
            server,
            "prompts",
            lambda cursor: client.list_prompts(cursor=cursor, cache_mode="refresh"),
            lambda page: page.prompts,
        ),
    )


async def list_catalog(client: Client, server: str) -> ServerCatalog:
    """Everything at once, as right after connecting.

    Raises:
        MCPError: ``tools/list`` failed (see :func:`list_tools`).
    """
    tools = await list_tools(client, server)
    resources, templates = await list_resources(client, server)
    prompts = await list_prompts(client, server)
    return ServerCatalog(tuple(tools), tuple(resources), tuple(templates), tuple(prompts))
