"""``Checkpoint``: a stage that need not wrap the call, so that a pipeline of them adds no frame per stage.

Every stage toolsift ships looks at the call on its way in (``PermissionFilter``
puts the profile on it, ``SecurityGuard`` refuses it) or at the result on its
way out (``AuditTrail``, ``ResultGuard``), never both around one ``await``. A
pipeline whose stages are all checkpoints runs them in one loop around the
innermost handler (``Pipeline.handle``); any other stage (a wrapper of
your own) makes it nest them, each its own frame, the checkpoints included,
with the same order and the same results.
"""

from __future__ import annotations

import time

from ..registry import CallHandler, CallRecord, ToolResult

__all__ = ["Checkpoint"]


class Checkpoint:
    """A stage made of an entry check and an exit step; used alone, it wraps ``handler`` like any stage.

    Args:
        handler: The next stage, when the stage is used on its own.
    """

    def __init__(self, handler: CallHandler) -> None:
        self._handler = handler

    def enter(self, call: CallRecord) -> CallRecord | ToolResult:
        """The call to pass on (as it came, or changed), or the result that answers it here."""
        return call

    def leave(self, call: CallRecord, result: ToolResult, seconds: float) -> ToolResult:
        """The result to pass out for ``call`` (as this stage received it), ``seconds`` after it came in."""
        return result

    async def __call__(self, call: CallRecord) -> ToolResult:
        started = time.perf_counter()
        entered = self.enter(call)
        if isinstance(entered, ToolResult):
            return entered
        return self.leave(call, await self._handler(entered), time.perf_counter() - started)
