"""Ctrl-C that cancels the work in hand instead of ending the program."""

from __future__ import annotations

import signal
from collections.abc import Awaitable

import anyio

__all__ = ["interruptible"]


async def interruptible(work: Awaitable[None]) -> bool:
    """Run ``work``; a SIGINT (Ctrl-C) meanwhile cancels it. Returns whether it was cancelled.

    While ``work`` runs, SIGINT is taken from Python's default handler (which
    would end the whole program with ``KeyboardInterrupt``), so a long tool call
    or model answer can be abandoned and the REPL goes on. A cancelled MCP call
    sends ``notifications/cancelled`` to its server, as any cancellation does.
    """
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tasks:

            async def cancel_on_interrupt() -> None:
                with anyio.open_signal_receiver(signal.SIGINT) as signals:
                    async for _ in signals:
                        scope.cancel()
                        return

            tasks.start_soon(cancel_on_interrupt)
            await work
            tasks.cancel_scope.cancel()
    return scope.cancelled_caught
