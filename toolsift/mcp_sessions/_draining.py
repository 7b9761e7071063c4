"""A drain's two ends: waiting until a session stops taking calls, and saying how its calls ended."""

from __future__ import annotations

import anyio

from ._session import McpSession
from ._state import SessionState
from ._tracker import CallCounts

__all__ = ["drain_outcome", "wait_draining"]


def drain_outcome(ended: CallCounts, seconds: float) -> str:
    """How the calls in flight of a drained session ended, in words (for ``server.removed``)."""
    if not ended.cancelled:
        return "every call in flight had finished"
    total = ended.finished + ended.cancelled
    verb = "was" if ended.cancelled == 1 else "were"
    return f"drainSeconds ({seconds:g}s) ran out: {ended.cancelled} of {total} calls in flight {verb} cancelled"


async def wait_draining(session: McpSession) -> None:
    """Wait until a session whose drain was scheduled has stopped taking calls (or is closed)."""
    done = (SessionState.DRAINING, SessionState.CLOSING, SessionState.CLOSED)
    if session.state in done:
        return
    reached = anyio.Event()
    unsubscribe = session.subscribe(lambda event: reached.set() if event.state in done else None)
    try:
        await reached.wait()
    finally:
        unsubscribe()
