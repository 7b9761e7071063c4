"""``TaskGroupResource``: an ``async with`` object that owns one task group, in anyio's ``AsyncResource`` style.

anyio's task groups are context managers, but an object whose tasks must
outlive one method (a session group running every session's owner task)
enters its task group in ``__aenter__`` and leaves it in ``__aexit__``. That
hand-driven pairing, its state checks and its unwind live here once.
"""

from __future__ import annotations

import enum
from types import TracebackType
from typing import Self

import anyio
from anyio.abc import TaskGroup

__all__ = ["ResourceState", "TaskGroupResource"]

# How long a clean exit may take to close what runs (each session's close is bounded by the
# SDK's own termination timeouts, so this is a safety net, not a budget anything relies on).
_GRACEFUL_CLOSE_SECONDS = 15.0


class ResourceState(enum.Enum):
    """Where a :class:`TaskGroupResource` is in its single life."""

    UNOPENED = "unopened"  # built, not entered yet: nothing runs
    OPEN = "open"  # entered: its task group runs, it takes work
    CLOSED = "closed"  # left (or failed to enter): nothing runs, and it cannot be entered again


class TaskGroupResource:
    """Owns one task group from ``__aenter__`` to ``__aexit__`` (or :meth:`aclose`).

    Subclasses start their own tasks in :meth:`_opened` and close what they
    run, gracefully, in :meth:`_closing`; :meth:`_closed` always runs last.
    Leaving on an exception (or cancellation) skips the graceful part: the
    task group is cancelled, which stops every task it still runs.
    """

    def __init__(self) -> None:
        self._state = ResourceState.UNOPENED
        self._tasks: TaskGroup | None = None

    @property
    def state(self) -> ResourceState:
        """Whether it is unopened, open or closed."""
        return self._state

    async def __aenter__(self) -> Self:
        name = type(self).__name__
        if self._state is ResourceState.OPEN:
            raise RuntimeError(f"{name} is already entered")
        if self._state is ResourceState.CLOSED:
            raise RuntimeError(f"Cannot reopen an {name} once it has been closed; create a new one")
        tasks = anyio.create_task_group()
        await tasks.__aenter__()
        self._tasks, self._state = tasks, ResourceState.OPEN
        try:
            await self._opened(tasks)
        except BaseException as exc:
            await self._close(exc)
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> None:
        await self._close(exc_val)

    async def aclose(self) -> None:
        """Close gracefully, as leaving ``async with`` without an error does; a no-op once closed.

        If the caller is cancelled meanwhile, closing still finishes first
        (bounded) and the cancellation is delivered afterwards.
        """
        await self._close(None)

    def _running(self) -> TaskGroup:
        """The task group, for starting work.

        Raises:
            RuntimeError: It is not entered (or already closed).
        """
        if self._tasks is None:
            name = type(self).__name__
            raise RuntimeError(f"{name} is not running; use 'async with {name}(...)'")
        return self._tasks

    async def _close(self, error: BaseException | None) -> None:
        tasks, self._tasks = self._tasks, None
        self._state = ResourceState.CLOSED
        if tasks is None:
            return
        try:
            if error is None:
                # Shielded: a clean exit closes everything in order (each call still running gets its
                # "cancelled" result, each server its notifications/cancelled, subscribers their last
                # events). A cancellation of the exiting task half-way (a timeout around the block, a
                # second Ctrl-C) would skip that and leave it to the blunt cancel below; the shield
                # only delays that cancellation, and by at most the bound.
                with anyio.move_on_after(_GRACEFUL_CLOSE_SECONDS, shield=True):
                    await self._closing()
        finally:
            try:
                self._closed()
            finally:
                # On an error, or if the graceful part ran out, whatever still runs is cancelled here.
                # The body's own exception propagates as it is, not wrapped in an exception group.
                tasks.cancel_scope.cancel()
                await tasks.__aexit__(None, None, None)

    async def _opened(self, tasks: TaskGroup) -> None:
        """Start what runs while open (a hook); an exception here closes it again and propagates."""

    async def _closing(self) -> None:
        """Close what runs, gracefully (a hook); skipped when leaving on an exception."""

    def _closed(self) -> None:
        """Forget what outlives the tasks (a hook); runs on every exit, before the tasks are cancelled."""
