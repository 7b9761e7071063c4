"""``AuditTrail``: the audit record of every refusal the registry never saw.

``ToolRegistry.execute`` audits each call that reaches it (ran, failed or
denied by a layer). A call refused before it (by ``SecurityGuard``) would
leave no record, so this stage writes one for those, into the same
``AuditLog``. It therefore sits outermost, where it sees every stage's answer.
(No stage withholds a result after the tool ran: ``ResultGuard`` cuts a big
one with a note, and the registry's record of the call stands.)
"""

from __future__ import annotations

import uuid
from typing import final

from .._redaction import redact
from ..registry import AuditLog, CallHandler, CallRecord, ToolResult
from ..registry._internal import AuditEvent
from ._call import refusal_of
from ._checkpoint import Checkpoint

__all__ = ["AuditTrail"]

_REASON_CHARS = 500


@final
class AuditTrail(Checkpoint):
    """Writes an audit event for each call a pipeline stage refused.

    Args:
        handler: The next stage.
        audit: Where events go (usually the registry's ``audit``, which can
            also write them to a JSON-lines file).
    """

    def __init__(self, handler: CallHandler, *, audit: AuditLog) -> None:
        super().__init__(handler)
        self._audit = audit

    def leave(self, call: CallRecord, result: ToolResult, seconds: float) -> ToolResult:
        refusal = refusal_of(result)
        if refusal is not None and not refusal["audited"]:
            self._audit.emit(
                AuditEvent(
                    kind="tool.denied",
                    tool=call.name,
                    outcome="denied",
                    call_id=uuid.uuid4().hex[:16],
                    duration_ms=round(seconds * 1000, 3),
                    skill=call.scope.skill,
                    agent=call.scope.agent,
                    reason=result.text_content()[:_REASON_CHARS],
                    arguments=redact(call.arguments),
                    flags=(refusal["stage"],),
                )
            )
        return result
