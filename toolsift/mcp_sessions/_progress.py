"""A call's progress callback that the call waits for before it returns its result.

The SDK's dispatcher hands each ``notifications/progress`` to the call's
callback in a task of its own, started in the order the notifications arrive,
and resolves the call the moment its answer arrives. A callback that waits on
anything (a gateway's sends the notification on to its own client) can then
still be running when the call returns, and its notification reaches the
client after the result, where nothing takes it any more. The callbacks'
tasks are started before the answer wakes the call (they were queued first),
so counting the callbacks that have begun and not ended tells the call what
it must wait for.
"""

from __future__ import annotations

import logging
from typing import final

import anyio

from ..registry._internal import ProgressCallback

__all__ = ["AwaitedProgress"]

# How long a result waits for progress callbacks still running (a gateway's send to a client that stopped reading
# would otherwise hold the result, and the call's slot, for good).
logger = logging.getLogger("toolsift.mcp_sessions")

SETTLE_SECONDS = 10.0


@final
class AwaitedProgress:
    """Wraps a progress callback so that :meth:`settled` returns once every call of it begun so far has ended.

    Args:
        callback: The caller's progress callback.
    """

    def __init__(self, callback: ProgressCallback) -> None:
        self._callback = callback
        self._running = 0
        self._idle = anyio.Event()
        self._idle.set()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        if self._running == 0:
            self._idle = anyio.Event()
        self._running += 1
        try:
            await self._callback(progress, total, message)
        finally:
            self._running -= 1
            if self._running == 0:
                self._idle.set()

    async def settle(self, server: str, tool: str) -> None:
        """Wait as :meth:`settled` does; a callback still busy then is logged, and the result goes on."""
        if not await self.settled():
            logger.warning(
                "MCP server %r: tool %r answered while its progress callback was still busy; the result "
                "goes on without waiting longer",
                server,
                tool,
            )

    async def settled(self) -> bool:
        """Wait until no call of the callback is running, ``SETTLE_SECONDS`` at most; whether none is.

        A cancelled or timed-out wait leaves them running.
        """
        with anyio.move_on_after(SETTLE_SECONDS):
            await self._idle.wait()
        return self._idle.is_set()
