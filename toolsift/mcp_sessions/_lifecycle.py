"""A session's state machine: the transitions it allows, the state, why, and who is told of every change.

Every part of a session (the owner task that connects and restarts, the
calls, ``drain`` and ``close``) moves the session through :meth:`Lifecycle.set`
and reads nothing but :attr:`Lifecycle.state` to decide what to do, so a call
and the owner can never disagree about whether the session is usable.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, Literal, TypeVar

import anyio

from ._state import SessionState

__all__ = ["EventKind", "Lifecycle"]

E = TypeVar("E")
#: What changed: the state (``state``), or the tool list (``tools``).
EventKind = Literal["state", "tools", "prompts", "resources"]

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


class Lifecycle(Generic[E]):
    """Holds a session's state and reason, checks each transition, logs it and tells the subscribers.

    Args:
        name: The server's name, for errors and log records.
        event: Makes the event the subscribers are told of a change of ``kind`` (the session's own
            event type: the state machine knows nothing of the session).
    """

    def __init__(self, name: str, event: Callable[[EventKind], E]) -> None:
        self._name = name
        self._event = event
        self._subscribers: list[Callable[[E], None]] = []
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

    def subscribe(self, callback: Callable[[E], None]) -> Callable[[], None]:
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
            raise RuntimeError(f"MCP session {self._name!r} cannot go from {self.state} to {state}")
        changed = state is not self.state or reason != self.reason
        self.state, self.reason = state, reason
        if state not in _UNSETTLED:
            self.settled.set()
        if changed:
            logger.info("MCP server %r: %s%s", self._name, state.value, f" ({reason})" if reason else "")
            self.emit("state")
        return True

    def emit(self, kind: EventKind) -> None:
        event = self._event(kind)
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception:
                logger.exception("subscriber %r of MCP session %r failed", callback, self._name)
