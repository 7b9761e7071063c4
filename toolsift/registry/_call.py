"""The call record: one tool call, from whoever asked (a served client, the agent loop) to the tool.

One record and one handler shape serve every path: ``ToolRegistry.handle``
takes a :class:`CallRecord`, each pipeline stage takes one and passes it on
(unchanged or as a ``dataclasses.replace`` copy), and the agent loop makes one
per call the model asks for. What the running tool sees of it is its
``ToolContext``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, final

from ._permissions import Permissions
from ._result import ToolResult
from ._scope import TurnScope
from ._tools import Forward, ProgressCallback, Unlocks

if TYPE_CHECKING:
    from ._approval import Approver

__all__ = ["CallHandler", "CallRecord"]


@final
@dataclass(frozen=True, slots=True)
class CallRecord:
    """One tool call on its way to the tool.

    Attributes:
        name: The tool's canonical registry name (``read_file``, ``github__search``) or a provider alias.
        arguments: The arguments as the caller sent them (not yet validated).
        scope: The turn scope the call is checked against (layers 1-4).
        permissions: The caller's permissions (layer 5).
        timeout: Seconds the tool may run, or None for no limit.
        progress: Receives the tool's progress notifications.
        discovery: The caller's unlocked tools (a conversation's or a served client's ``Discovery``),
            which ``search_tools`` unlocks what it finds into; None: nothing is unlocked.
        approver: Who approves this call when it asks, in place of the permissions' approver: the
            caller's own (a gateway asks the client that made the request); None: the permissions'.
        forward: The caller's own way of making the call when the tool is an MCP server's (a gateway
            sends it as its client and gets back what the client must see); None: the session's.

    What the call ended with is what it returns: a :class:`ToolResult`, or a subclass of it that
    says more (input the caller must give, a task it follows), for the caller that asked for it.
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    scope: TurnScope = field(default_factory=TurnScope)
    permissions: Permissions = field(default_factory=Permissions)
    timeout: float | None = None
    progress: ProgressCallback | None = None
    discovery: Unlocks | None = None
    approver: Approver | None = None
    forward: Forward | None = None


#: The one shape of everything that runs a call: ``ToolRegistry.handle``, each pipeline stage,
#: ``Pipeline.handle``, and the agent loop's ``call_handler``.
CallHandler = Callable[[CallRecord], Awaitable[ToolResult]]
