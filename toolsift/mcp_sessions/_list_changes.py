"""Following a 2026-07-28 server's list changes on a ``subscriptions/listen`` stream.

The stream is opened before the connection's first listing and waited for until
the server acknowledges it, so that no change made after that listing is missed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import anyio
import anyio.abc
from mcp import Client, MCPError
from mcp.client.subscriptions import (
    ListenNotSupportedError,
    PromptsListChanged,
    ResourcesListChanged,
    SubscriptionLost,
    ToolsListChanged,
)

from ._connection_events import ListKind

if TYPE_CHECKING:
    from ._connection_events import ConnectionEvents

__all__ = ["EVENT_KINDS", "followed_lists", "listen"]

logger = logging.getLogger("toolsift.mcp_sessions")

EVENT_KINDS: dict[type, ListKind] = {
    ToolsListChanged: "tools",
    ResourcesListChanged: "resources",
    PromptsListChanged: "prompts",
}


def followed_lists(client: Client) -> frozenset[ListKind]:
    """The lists whose changes a 2026-07-28 server announces on a listen stream (its capabilities say)."""
    caps = client.server_capabilities
    kinds: list[ListKind] = []
    if caps.tools and caps.tools.list_changed:
        kinds.append("tools")
    if caps.resources and caps.resources.list_changed:
        kinds.append("resources")
    if caps.prompts and caps.prompts.list_changed:
        kinds.append("prompts")
    return frozenset(kinds)


async def listen(
    client: Client,
    events: ConnectionEvents,
    kinds: frozenset[ListKind],
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Follow a 2026-07-28 server's list-changed events of ``kinds`` on a ``subscriptions/listen`` stream.

    Started once the server acknowledged the stream, or once it could not be opened (which is logged).
    """
    started = False
    try:
        async with client.listen(
            tools_list_changed="tools" in kinds,
            resources_list_changed="resources" in kinds,
            prompts_list_changed="prompts" in kinds,
        ) as subscription:
            started = True
            task_status.started()
            async for event in subscription:
                kind = EVENT_KINDS.get(type(event))
                if kind is not None:
                    events.request_relist(kind)
    except (ListenNotSupportedError, MCPError, SubscriptionLost, TimeoutError) as exc:
        if not events.wake.is_set():
            logger.warning(
                "MCP server %r: cannot follow its list changes (subscriptions/listen: %s)", events.server, exc
            )
    if not started:
        task_status.started()
