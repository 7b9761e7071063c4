"""The registry: tools, names, globs, scopes, permissions, schema formats and audit.

It imports nothing from the rest of toolsift; sessions, skills and the agent
loop build on it.
"""

from .._public import publish
from ._approval import ApprovalRequest as ApprovalRequest
from ._approval import Approver as Approver
from ._audit import AuditLog as AuditLog
from ._call import CallHandler as CallHandler
from ._call import CallRecord as CallRecord
from ._function import tool as tool
from ._levels import Level as Level
from ._permissions import Permissions as Permissions
from ._permissions import ToolRule as ToolRule
from ._registry import ToolRegistry as ToolRegistry
from ._result import ToolResult as ToolResult
from ._scope import TurnScope as TurnScope
from ._spec import ToolSpec as ToolSpec
from ._tools import Tool as Tool
from ._tools import ToolContext as ToolContext

__all__ = [
    "ApprovalRequest",
    "Approver",
    "AuditLog",
    "CallHandler",
    "CallRecord",
    "Level",
    "Permissions",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "ToolRule",
    "ToolSpec",
    "TurnScope",
    "tool",
]

publish(globals(), __name__, __all__)
