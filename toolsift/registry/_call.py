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
from typing import Any, TypeVar, final

from ._extensions import find_extension
from ._permissions import Permissions
from ._result import ToolResult
from ._scope import TurnScope
from ._tools import ProgressCallback

__all__ = ["CallHandler", "CallRecord"]

E = TypeVar("E")


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
        extensions: State that whoever made the call hands to the tools it runs, one object per
            type, found with :meth:`extension`: the conversation's ``Discovery`` that
            ``search_tools`` unlocks into, ``VerbatimResults`` for MCP tools whose results go to
            an MCP client, the served request an approver asks. The registry reads none of them:
            they reach the tool as ``ToolContext.extensions`` and the approver as
            ``ApprovalRequest.extensions``, and stay with this call (never another task's).
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    scope: TurnScope = field(default_factory=TurnScope)
    permissions: Permissions = field(default_factory=Permissions)
    timeout: float | None = None
    progress: ProgressCallback | None = None
    extensions: tuple[object, ...] = ()

    def extension(self, kind: type[E]) -> E | None:
        """The extension of type ``kind`` this call carries, or None."""
        return find_extension(self.extensions, kind)


#: The one shape of everything that runs a call: ``ToolRegistry.handle``, each pipeline stage,
#: ``Pipeline.handle``, and the agent loop's ``call_handler``.
CallHandler = Callable[[CallRecord], Awaitable[ToolResult]]
