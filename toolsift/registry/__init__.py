"""The registry: tools, names, globs, scopes, permissions, schema formats and audit.

It imports nothing from the rest of toolsift; sessions, skills and the agent
loop build on it.
"""

from .._public import publish
from .._redaction import looks_like_secret as looks_like_secret
from .._redaction import redact as redact
from ._approval import ApprovalRequest as ApprovalRequest
from ._approval import Approver as Approver
from ._audit import AuditEvent as AuditEvent
from ._audit import AuditLog as AuditLog
from ._call import CallHandler as CallHandler
from ._call import CallRecord as CallRecord
from ._function import FunctionTool as FunctionTool
from ._function import tool as tool
from ._globs import PatternSet as PatternSet
from ._globs import compile_patterns as compile_patterns
from ._globs import literal_server as literal_server
from ._globs import validate_pattern as validate_pattern
from ._known_names import SERVED_BUILTIN_NAMESPACE as SERVED_BUILTIN_NAMESPACE
from ._levels import Level as Level
from ._names import split_name as split_name
from ._names import validate_server_name as validate_server_name
from ._names import validate_tool_name as validate_tool_name
from ._permissions import PermissionLayer as PermissionLayer
from ._permissions import Permissions as Permissions
from ._permissions import ToolRule as ToolRule
from ._permissions import check_permissions as check_permissions
from ._registry import RegistryChange as RegistryChange
from ._registry import ToolRegistry as ToolRegistry
from ._scope import TurnScope as TurnScope
from ._tools import ContentBlock as ContentBlock
from ._tools import ProgressCallback as ProgressCallback
from ._tools import Tool as Tool
from ._tools import ToolContext as ToolContext
from ._tools import ToolResult as ToolResult
from ._tools import ToolSpec as ToolSpec
from .formats import FORMATS as FORMATS
from .formats import SchemaFormat as SchemaFormat
from .formats import get_format as get_format

__all__ = [
    "FORMATS",
    "SERVED_BUILTIN_NAMESPACE",
    "ApprovalRequest",
    "Approver",
    "AuditEvent",
    "AuditLog",
    "CallHandler",
    "CallRecord",
    "ContentBlock",
    "FunctionTool",
    "Level",
    "PatternSet",
    "PermissionLayer",
    "Permissions",
    "ProgressCallback",
    "RegistryChange",
    "SchemaFormat",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "ToolRule",
    "ToolSpec",
    "TurnScope",
    "check_permissions",
    "compile_patterns",
    "get_format",
    "literal_server",
    "looks_like_secret",
    "redact",
    "split_name",
    "tool",
    "validate_pattern",
    "validate_server_name",
    "validate_tool_name",
]

publish(globals(), __name__, __all__)
