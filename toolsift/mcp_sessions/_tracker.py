"""The calls running through a session: how many, how they ended, a way to wait until none, to cancel them."""

from __future__ import annotations

from types import TracebackType
from typing import NamedTuple

import anyio

__all__ = ["CallCounts", "CallTracker"]


class CallCounts(NamedTuple):
    """How many calls ended, by how they ended.

    Attributes:
        finished: Calls that returned on their own (error results included).
        cancelled: Calls that :meth:`CallTracker.cancel_all` ended.
    """

    finished: int = 0
    cancelled: int = 0

    def since(self, before: CallCounts) -> CallCounts:
        """The calls that ended after ``before`` was taken."""
        return CallCounts(self.finished - before.finished, self.cancelled - before.cancelled)


class CallTracker:
    """Counts running calls, holds their cancel scopes, and counts how they ended.

    Draining waits on :meth:`wait_idle`; closing cancels every scope, so each
    call can return its own "cancelled" result instead of an exception
    reaching a caller that did nothing wrong. A call its own caller abandoned
    (cancelled from outside) is counted neither way.
    """

    def __init__(self) -> None:
        self._scopes: set[anyio.CancelScope] = set()
        self._idle = anyio.Event()
        self._idle.set()
        self._finished = 0
        self._cancelled = 0

    @property
    def running(self) -> int:
        """Calls running now."""
        return len(self._scopes)

    @property
    def ended(self) -> CallCounts:
        """The calls that have ended so far, by how they ended."""
        return CallCounts(self._finished, self._cancelled)

    def track(self) -> _Tracked:
        """Run one call inside the returned context, which is the call's cancel scope."""
        return _Tracked(self)

    def cancel_all(self) -> None:
        """Cancel every running call."""
        for scope in list(self._scopes):
            scope.cancel()

    async def wait_idle(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for no call to run; True when none does."""
        with anyio.move_on_after(timeout):
            await self._idle.wait()
        return not self._scopes


class _Tracked:
    """One call's cancel scope, registered with its tracker while it runs.

    A plain class rather than ``@contextmanager``: it runs on every call, and the
    generator machinery would cost more than the bookkeeping itself.
    """

    __slots__ = ("_scope", "_tracker")

    def __init__(self, tracker: CallTracker) -> None:
        self._tracker = tracker
        self._scope = anyio.CancelScope()

    def __enter__(self) -> anyio.CancelScope:
        tracker = self._tracker
        if not tracker._scopes:
            tracker._idle = anyio.Event()
        tracker._scopes.add(self._scope)
        return self._scope.__enter__()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> bool:
        tracker = self._tracker
        tracker._scopes.discard(self._scope)
        if not tracker._scopes:
            tracker._idle.set()
        swallowed = bool(self._scope.__exit__(exc_type, exc_val, exc_tb))
        if self._scope.cancelled_caught:
            tracker._cancelled += 1
        elif exc_type is None:
            tracker._finished += 1
        return swallowed
