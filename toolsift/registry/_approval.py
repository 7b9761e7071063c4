"""The "ask" tier of layer 5: calls that run only once someone approves them.

Rules come in three strengths, the strongest winning, as in Claude Code:
``deny`` (the denylist: never runs) > ``ask`` (runs when approved) > allow
(runs). A call asks when its tool matches one of the caller's ``ask`` globs or,
with ``ask_destructive``, when the tool may be destructive by MCP's
annotations (``approval_reason``, beside the other rules of layer 5). Who
approves is the caller's business: an async callback on the caller's
:class:`~toolsift.registry.Permissions` (a person at a terminal, an MCP
client asked by elicitation, a policy in code). Without one, a call that
asks is refused: silence never means yes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._approval_text import SecretMask, Spill, describe_call

if TYPE_CHECKING:
    from ._result import ToolResult
    from ._spec import ToolSpec

__all__ = ["ApprovalRequest", "Approver"]


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

    def describe(self, *, mask: SecretMask | None = None, spill: Spill | None = None) -> str:
        """The whole call for the person who approves it: the tool, why it asks, every argument in full.

        Nothing is cut or hidden for looking sensitive (a key named
        ``author``, a value shaped like a key): what is not shown cannot be
        judged. Characters that hide or rewrite text are shown escaped.

        Args:
            mask: Hides the configured secrets (a session's masker); the text
                says how many values it hid.
            spill: Keeps values too long to show inline (a file, say) and says
                where; their head and tail stay in the text.
        """
        return describe_call(self.tool.name, self.reason, self.arguments, mask=mask, spill=spill)


#: Returns True to run the call, False to decline it. Raising refuses it, with the exception's message as the
#: reason. An approver that cannot answer yet returns the result the call ends with for now (a question
#: the caller must answer first, such as a served client's ``InputRequiredResult``), audited as refused.
Approver = Callable[[ApprovalRequest], Awaitable["bool | ToolResult"]]
