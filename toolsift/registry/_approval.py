"""The "ask" tier of layer 5: calls that run only once someone approves them.

Rules come in three strengths, the strongest winning, as in Claude Code:
``deny`` (the denylist: never runs) > ``ask`` (runs when approved) > allow
(runs). A call asks when its tool matches one of the caller's ``ask`` globs or,
with ``ask_destructive``, when the tool may be destructive by MCP's
annotations. Who approves is the caller's business: an async callback on the
caller's :class:`~toolsift.registry.Permissions` (a person at a terminal, an
MCP client asked by elicitation, a policy in code). Without one, a call that
asks is refused: silence never means yes.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._audit import redact
from ._globs import compile_patterns

if TYPE_CHECKING:
    from ._permissions import Permissions
    from ._tools import ToolSpec

__all__ = ["ApprovalRequest", "Approver", "approval_reason"]


@dataclass(frozen=True)
class ApprovalRequest:
    """One call waiting for approval, as the approver sees it.

    Attributes:
        tool: The tool's spec (name, description, annotations, server).
        arguments: The arguments the call will run with, already validated.
        reason: Why this call asks (``"it matches ask rule 'github__delete_*'"``).
        call_id: The call's id, as its audit record will carry it.
        skill: The active skill of the turn, if any.
        agent: The agent profile of the turn, if any.
    """

    tool: ToolSpec
    arguments: Mapping[str, Any]
    reason: str
    call_id: str
    skill: str | None = None
    agent: str | None = None

    def describe(self) -> str:
        """One line for a person: the tool, why it asks, and the arguments."""
        # The audit's redaction: a prompt never shows a credential either.
        shown = json.dumps(redact(self.arguments), ensure_ascii=False, default=str)
        return f"{self.tool.name} {shown} ({self.reason})"


# Returns True to run the call. Raising refuses it, with the exception's message as the reason.
Approver = Callable[[ApprovalRequest], Awaitable[bool]]


def approval_reason(spec: ToolSpec, permissions: Permissions) -> str | None:
    """Why a call of ``spec`` must be approved under ``permissions``, or None when it need not be."""
    if permissions.ask:
        patterns = compile_patterns(permissions.ask)
        if patterns.matches(spec.name):
            rule = next(p for p in permissions.ask if compile_patterns([p]).matches(spec.name))
            return f"it matches ask rule {rule!r}"
    if permissions.ask_destructive and spec.destructive:
        return "it may be destructive (MCP annotations: not readOnlyHint, destructiveHint not false)"
    return None
