"""What the session learns from one connection, and how it asks the connection to end.

Shared by the connection (``_connection``), the handshake-era connection kept
beside it (``_handshake``) and the session's supervisor, which reads it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import anyio
import mcp.types as types
from pydantic import ValidationError

__all__ = ["RELIST_MAX_WAIT_SECONDS", "RELIST_QUIET_SECONDS", "ConnectionEvents", "ListKind"]

logger = logging.getLogger("toolsift.mcp_sessions")

ListKind = Literal["tools", "resources", "prompts"]
# A burst of list_changed notifications (some servers send one per tool they register) becomes one
# listing: it starts once none came for this long, or this long after the first at the latest.
RELIST_QUIET_SECONDS = 0.05
RELIST_MAX_WAIT_SECONDS = 1.0


@dataclass
class ConnectionEvents:
    """What the session learns from one connection, and how it asks the connection to end.

    Attributes:
        server: The server name, for log records.
        on_lost: Called once when the connection is found lost.
        wake: Set to end the connection (close requested, or the connection was lost).
        lost: Why the connection was lost, once it was.
        ready: The connection got as far as ready.
        ready_at: When it did (``anyio.current_time()``), to tell a healthy connection from a crash loop.
        relist: Lists to fetch again; :meth:`request_relist` adds to it.
    """

    server: str
    on_lost: Callable[[ConnectionEvents], None] | None = None
    wake: anyio.Event = field(default_factory=anyio.Event)
    lost: str | None = None
    ready: bool = False
    ready_at: float | None = None
    relist: set[ListKind] = field(default_factory=set)
    _relist_event: anyio.Event = field(default_factory=anyio.Event)

    def connection_lost(self, reason: str) -> None:
        """Record why the connection ended (the first reason wins) and wake the owner."""
        if self.lost is None and not self.wake.is_set():
            self.lost = reason
            self.wake.set()
            if self.on_lost is not None:
                self.on_lost(self)

    def request_relist(self, kind: ListKind) -> None:
        self.relist.add(kind)
        self._relist_event.set()

    async def next_relist(self) -> set[ListKind]:
        """Wait for re-list requests and take them all once they stop coming (a burst, one listing).

        The requests are taken when none came for ``RELIST_QUIET_SECONDS``, or
        ``RELIST_MAX_WAIT_SECONDS`` after the first, so that a server that never
        stops announcing is still listed. With the one listing that may be
        running, at most one listing is in flight and one pending.
        """
        await self._relist_event.wait()
        deadline = anyio.current_time() + RELIST_MAX_WAIT_SECONDS
        while (quiet := min(RELIST_QUIET_SECONDS, deadline - anyio.current_time())) > 0:
            self._relist_event = anyio.Event()
            with anyio.move_on_after(quiet):
                await self._relist_event.wait()
            if not self._relist_event.is_set():
                break
        self._relist_event = anyio.Event()
        kinds, self.relist = self.relist, set()
        return kinds

    # ConnectionWatcher (see _transport): called from the SDK's reader task.
    def transport_ended(self) -> None:
        self.connection_lost("the server's output ended (it exited or closed the connection)")

    def unparsable_message(self, error: Exception) -> None:
        if isinstance(error, ValidationError):
            details = error.errors()
            data = details[0].get("input") if details else None
            if isinstance(data, dict) and "error" in data and "id" not in data:
                # An error response without its "id" member does not even parse.
                error_data = data["error"] if isinstance(data["error"], dict) else {}
                self.orphan_error(
                    types.ErrorData(code=int(error_data.get("code", 0)), message=str(error_data.get("message", "")))
                )
                return
            what = f"{details[0]['msg']}: {data!r:.120}" if details else str(error)
        else:
            what = f"{type(error).__name__}: {error}"
        logger.warning("MCP server %r wrote something that is not a JSON-RPC message; ignored (%s)", self.server, what)

    def orphan_error(self, error: types.ErrorData) -> None:
        logger.warning(
            "MCP server %r sent an error response without a request id (JSON-RPC error %d: %r); "
            "ignored. Servers do this when they do not know a notification.",
            self.server,
            error.code,
            error.message,
        )
