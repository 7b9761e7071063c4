"""The handshake-era connection an HTTP server's 2026-07-28 connection keeps beside it, opened at first need.

A server of the 2.x SDK speaks both eras on one endpoint, but a tool written
against the classic API asks (``ctx.elicit``, sampling, roots) from inside the
call, which a 2026-07-28 connection gives it no channel for: the server refuses
its own question with "no back-channel". Over HTTP a second connection costs a
few requests, so a session that answers servers' requests keeps one of the
handshake era beside its 2026-07-28 one for the calls whose caller answers
questions in the middle of the call (see :func:`~._connection.connect_mode`).

The sibling lives and dies with its 2026-07-28 connection: the owner task
enters and exits it among that connection's watchers, so a drain, a close or a
reconnect ends both. Its loss counts as the loss of the session's connection
(the session reconnects both); its list-changed notifications ask for the same
one listing as the 2026-07-28 connection's, for the kinds that connection does
not follow itself.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING

import anyio
import mcp.types as types
from mcp import Client

if TYPE_CHECKING:
    from ._connection_events import ConnectionEvents
    from ._transport import ConnectionWatcher

__all__ = ["HandshakeSibling"]

logger = logging.getLogger("toolsift.mcp_sessions")

Opener = Callable[["ConnectionWatcher"], AbstractAsyncContextManager[Client]]


class HandshakeSibling:
    """A handshake-era connection beside a 2026-07-28 one, opened when a call first needs it.

    Args:
        server: The server name, for log records.
        events: The 2026-07-28 connection's events: a loss of this connection is a loss of that one.
        timeout: Seconds to connect (the server's ``timeout``).
    """

    def __init__(self, server: str, events: ConnectionEvents, timeout: float) -> None:
        self._server = server
        self._events = events
        self._timeout = timeout
        self._wanted = anyio.Event()
        self._settled = anyio.Event()
        self.client: Client | None = None
        self.refused: str | None = None  # why it could not be opened, once it could not

    async def open(self) -> Client | None:
        """The handshake-era connection, opened by the owner task on first need; None when the server refused it.

        If the caller is cancelled while it opens, the opening goes on for the next caller.
        """
        self._wanted.set()
        await self._settled.wait()
        return self.client

    async def run(self, opener: Opener) -> None:
        """Open the connection once asked to, and hold it until cancelled (with the 2026-07-28 connection).

        A server that refuses the handshake era (a server of 2026-07-28 alone) leaves
        it closed for the life of the 2026-07-28 connection; calls then go over that one.
        """
        # As for the 2026-07-28 connection, the deadline encloses the Client's whole life (its task groups are
        # entered inside it) and is lifted once the connection is open.
        deadline = anyio.CancelScope()
        try:
            await self._wanted.wait()
            deadline.deadline = anyio.current_time() + self._timeout
            with deadline:
                async with opener(self) as client:
                    deadline.deadline = math.inf
                    self.client = client
                    self._settled.set()
                    logger.info("MCP server %r: handshake-era connection opened beside the 2026 one", self._server)
                    await anyio.sleep_forever()
        except Exception as exc:
            if self.client is not None:
                self._events.connection_lost(f"the handshake-era connection failed: {exc}")
            else:
                self._refuse(str(exc) or type(exc).__name__)
        finally:
            if deadline.cancelled_caught:
                self._refuse(f"it did not connect within {self._timeout:g}s")
            # Whoever waits in open() learns the outcome, even when the 2026-07-28 connection ended first.
            self.client = None
            self._settled.set()

    def _refuse(self, why: str) -> None:
        self.refused = why
        logger.info("MCP server %r: no handshake-era connection beside the 2026 one (%s)", self._server, why)

    # ConnectionWatcher (see _transport): called from the SDK's reader task.
    def transport_ended(self) -> None:
        if self.client is not None:
            self._events.connection_lost("the server closed the handshake-era connection")

    def unparsable_message(self, error: Exception) -> None:
        self._events.unparsable_message(error)

    def orphan_error(self, error: types.ErrorData) -> None:
        self._events.orphan_error(error)
