"""A session's state machine: the state, why, and who is told of every change."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import anyio

from ._state import SessionEvent, SessionState

if TYPE_CHECKING:
    from ._session import McpSession

__all__ = ["Lifecycle"]

logger = logging.getLogger("toolsift.mcp_sessions")

# Once draining, only closing may follow: a reconnect finishing late must not make it ready again.
_AFTER_DRAINING = (SessionState.DRAINING, SessionState.CLOSED)


class Lifecycle:
    """Holds a session's state and reason, logs each change and tells the subscribers.

    Args:
        session: The session the events are about.
        tool_names: Gives the session's current canonical tool names, for events.
    """

    def __init__(self, session: McpSession, tool_names: Callable[[], tuple[str, ...]]) -> None:
        self._session = session
        self._tool_names = tool_names
        self._subscribers: list[Callable[[SessionEvent], None]] = []
        self.state = SessionState.IDLE
        self.reason: str | None = None
        self.settled = anyio.Event()  # set once the first attempt is over (ready, error, draining, closed)

    def subscribe(self, callback: Callable[[SessionEvent], None]) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    def set(self, state: SessionState, reason: str | None) -> None:
        """Move to ``state``; a no-op for anything but closing once draining."""
        if self.state is SessionState.DRAINING and state not in _AFTER_DRAINING:
            return
        changed = state is not self.state or reason != self.reason
        self.state, self.reason = state, reason
        if state not in (SessionState.CONNECTING, SessionState.IDLE):
            self.settled.set()
        if changed:
            logger.info("MCP server %r: %s%s", self._session.name, state.value, f" ({reason})" if reason else "")
            self.emit("state")

    def emit(self, kind: Literal["state", "tools"]) -> None:
        event = SessionEvent(session=self._session, kind=kind, state=self.state, reason=self.reason,
                             tools=self._tool_names())
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception:
                logger.exception("subscriber %r of MCP session %r failed", callback, self._session.name)
