"""Telling connected clients that the tool list changed, in both protocol eras.

Handshake-era clients (``initialize``, up to 2025-11-25) get a spontaneous
``notifications/tools/list_changed`` on their connection's standalone
channel; 2026-07-28 clients get it only on a ``subscriptions/listen`` stream
they opened, which the SDK's ``ListenHandler`` serves from a subscription
bus. The SDK keeps no list of live connections, so this module records each
handshake-era connection when its ``notifications/initialized`` arrives and
forgets it when the connection closes.

Changes arrive from synchronous callbacks (registry and skill-loader
subscribers); they only set an event, and one task compares the served list
before and after, so a burst of edits gives one notification and an edit
that changes nothing visible gives none.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from typing import Any, final

import anyio
from anyio.abc import TaskStatus
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import SubscriptionBus, ToolsListChanged

__all__ = ["ToolListAnnouncer"]

logger = logging.getLogger("toolsift.serve")

_INITIALIZED = "notifications/initialized"


def _connection_of(session: ServerSession) -> Connection | None:
    # The request context does not expose the Connection (the SDK calls its context
    # API provisional), but Connection.exit_stack is documented as the place for
    # cleanup pushed by middleware, which is exactly what is needed here.
    connection = getattr(session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


@final
class ToolListAnnouncer:
    """Announces tool-list changes to every connected client.

    Use :meth:`track` as a server middleware, call :meth:`changed` from any
    subscriber, and run :meth:`run` in a task group.

    Args:
        bus: The subscription bus the server's ``ListenHandler`` reads.
        signature: Returns a value that differs whenever the served list differs.
    """

    def __init__(self, bus: SubscriptionBus, signature: Callable[[], Hashable]) -> None:
        self._bus = bus
        self._signature = signature
        self._sessions: dict[int, ServerSession] = {}
        self._changed = anyio.Event()

    @property
    def connections(self) -> int:
        """Handshake-era connections currently tracked."""
        return len(self._sessions)

    def tracked(self) -> list[ServerSession]:
        """The handshake-era connections currently tracked, to tell of other lists' changes too."""
        return list(self._sessions.values())

    async def track(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Server middleware: remember each handshake-era connection once it is initialized."""
        result = await call_next(ctx)
        if ctx.method == _INITIALIZED:
            connection = _connection_of(ctx.session)
            key = id(connection) if connection is not None else id(ctx.session)
            self._sessions[key] = ctx.session
            if connection is not None:
                connection.exit_stack.callback(self._sessions.pop, key, None)
        return result

    def changed(self, *_: object) -> None:
        """Note that the tool list may have changed (safe to call from synchronous subscribers)."""
        self._changed.set()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Announce every change until cancelled; cancellation ends it at once."""
        last = self._signature()
        task_status.started()
        while True:
            await self._changed.wait()
            self._changed = anyio.Event()
            current = self._signature()
            if current != last:
                last = current
                await self.announce()

    async def announce(self) -> None:
        """Send ``tools/list_changed`` to every tracked connection and every listen stream."""
        for session in list(self._sessions.values()):
            try:
                await session.send_tool_list_changed()
            except Exception:
                # A connection that went away mid-send must not keep the others from hearing.
                logger.debug("could not announce a tool-list change to a client", exc_info=True)
        await self._bus.publish(ToolsListChanged())
