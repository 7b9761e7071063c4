"""The calls running through a session: how many, a way to wait until none, a way to cancel them."""

from __future__ import annotations

from types import TracebackType

import anyio

__all__ = ["CallTracker"]


class CallTracker:
    """Counts running calls and holds their cancel scopes.

    Draining waits on :meth:`wait_idle`; closing cancels every scope, so each
    call can return its own "cancelled" result instead of an exception
    reaching a caller that did nothing wrong.
    """

    def __init__(self) -> None:
        self._scopes: set[anyio.CancelScope] = set()
        self._idle = anyio.Event()
        self._idle.set()

    @property
    def running(self) -> int:
        """Calls running now."""
        return len(self._scopes)

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

    def __exit__(self, exc_type: type[BaseException] | None, exc_val: BaseException | None,
                 exc_tb: TracebackType | None) -> bool:
        tracker = self._tracker
        tracker._scopes.discard(self._scope)
        if not tracker._scopes:
            tracker._idle.set()
        return bool(self._scope.__exit__(exc_type, exc_val, exc_tb))
