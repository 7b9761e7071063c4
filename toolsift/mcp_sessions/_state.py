"""A session's lifecycle states and the one-line status the CLI prints."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

__all__ = ["SessionState", "SessionStatus"]


class SessionState(StrEnum):
    """Where a session is in its life; the one place that decides what a call gets.

    ``idle -> connecting -> ready`` is the happy path. A loss after the
    session was ready goes to ``restarting`` (backoff, then a new connection)
    and back to ``ready``; when the restart budget is spent it waits in
    ``error`` and restarts once the window has room. ``draining``, ``closing``
    and ``closed`` are the way out, in that order: once on it, a session never
    goes back (see ``Lifecycle`` for the transitions).
    """

    IDLE = "idle"  # not connected yet: a lazy server before its first use, or a session not started
    CONNECTING = "connecting"  # first connection: spawning or dialling, handshaking, listing
    READY = "ready"  # connected: calls go through
    RESTARTING = "restarting"  # lost after being ready: waiting out the backoff, or connecting again
    ERROR = "error"  # could not start, or gave up restarting (until the budget or a reload allows); calls fail fast
    DRAINING = "draining"  # removed or changed: no new calls; running ones may finish until the deadline
    CLOSING = "closing"  # running calls are being cancelled and the connection shut down
    CLOSED = "closed"  # stopped: the server process or connection is gone


@dataclass(frozen=True)
class SessionStatus:
    """One row of the status table.

    Attributes:
        server: The server name.
        transport: ``stdio``, ``http`` or ``sse``.
        visibility: ``global`` (tools in front of the model) or ``internal`` (catalogued, hidden).
        state: The session state.
        tools: How many tools are registered (or would be, for a session without registry).
        error: Why the session is not ready, if it is not.
        restarts: Crash restarts so far.
        protocol: The negotiated MCP protocol version, once connected.
        held: The server's own names of tools held back because their definition changed
            since it was pinned (``error`` says how to accept them).
    """

    server: str
    transport: str
    visibility: Literal["global", "internal"]
    state: SessionState
    tools: int
    error: str | None = None
    restarts: int = 0
    protocol: str | None = None
    held: tuple[str, ...] = ()

    def line(self) -> str:
        """The row as one log line."""
        text = (
            f"{self.server}: {self.state} ({self.transport}, {self.visibility}, {self.tools} tools"
            f"{f', protocol {self.protocol}' if self.protocol else ''}"
            f"{f', {self.restarts} restarts' if self.restarts else ''})"
        )
        return f"{text}: {self.error}" if self.error else text
