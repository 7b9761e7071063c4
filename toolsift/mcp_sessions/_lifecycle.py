"""A session's state machine: the transitions it allows, the state, why, and who is told of every change.

Every part of a session (the owner task that connects and restarts, the
calls, ``drain`` and ``close``) moves the session through :meth:`Lifecycle.set`
and reads nothing but :attr:`Lifecycle.state` to decide what to do, so a call
and the owner can never disagree about whether the session is usable.
"""

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

_S = SessionState
# The way out, in order: once a session is on it, it only moves further along.
_WAY_OUT = (_S.DRAINING, _S.CLOSING, _S.CLOSED)
# Where each state may go. The way out is open from every state before it; a move back from the way out
# (a reconnect that finishes after a drain began, say) is a race the session expects and ignores.
_NEXT: dict[SessionState, frozenset[SessionState]] = {
    _S.IDLE: frozenset({_S.CONNECTING, *_WAY_OUT}),
    _S.CONNECTING: frozenset({_S.CONNECTING, _S.READY, _S.ERROR, *_WAY_OUT}),
    _S.READY: frozenset({_S.RESTARTING, _S.ERROR, *_WAY_OUT}),  # error: lost, and not restarted
    _S.RESTARTING: frozenset({_S.RESTARTING, _S.READY, _S.ERROR, *_WAY_OUT}),
    _S.ERROR: frozenset({_S.RESTARTING, *_WAY_OUT}),
    _S.DRAINING: frozenset({_S.CLOSING, _S.CLOSED}),
    _S.CLOSING: frozenset({_S.CLOSED}),
    _S.CLOSED: frozenset({_S.CLOSED}),
}
# Before any of these the first connection attempt is not over yet.
_UNSETTLED = (_S.IDLE, _S.CONNECTING)


class Lifecycle:
    """Holds a session's state and reason, checks each transition, logs it and tells the subscribers.

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
        self.settled = anyio.Event()  # set once the first attempt is over (ready, error, or the way out)

    @property
    def leaving(self) -> bool:
        """Whether the session is on its way out (draining, closing or closed): it never serves again."""
        return self.state in _WAY_OUT

    @property
    def closing(self) -> bool:
        """Whether the session is closing or closed: running calls are cancelled, nothing reconnects."""
        return self.state in (_S.CLOSING, _S.CLOSED)

    def subscribe(self, callback: Callable[[SessionEvent], None]) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    def set(self, state: SessionState, reason: str | None) -> bool:
        """Move to ``state`` (or update the reason); returns whether the move was made.

        A move back from the way out is ignored (it is a late step of a task
        that has not noticed yet); any other move the table does not allow is
        a bug and raises.

        Raises:
            RuntimeError: The transition is not one a session can make.
        """
        if state not in _NEXT[self.state]:
            if self.leaving:
                return False
            raise RuntimeError(f"MCP session {self._session.name!r} cannot go from {self.state} to {state}")
        changed = state is not self.state or reason != self.reason
        self.state, self.reason = state, reason
        if state not in _UNSETTLED:
            self.settled.set()
        if changed:
            logger.info("MCP server %r: %s%s", self._session.name, state.value, f" ({reason})" if reason else "")
            self.emit("state")
        return True

    def emit(self, kind: Literal["state", "tools", "prompts", "resources"]) -> None:
        event = SessionEvent(
            session=self._session, kind=kind, state=self.state, reason=self.reason, tools=self._tool_names()
        )
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception:
                logger.exception("subscriber %r of MCP session %r failed", callback, self._session.name)
