"""The MCP client: sessions, the session group, resource router tools, hot reload.

:class:`McpSession` is one supervised connection (stdio, Streamable HTTP or
SSE, both protocol eras) shared by every task that calls it; it restarts
crashed servers with backoff and keeps the registry in step with the server's
tools (:class:`McpToolWrapper`, ``server__tool``). :class:`McpSessionGroup`
is the one owner of a set of sessions: it starts them in parallel, hands a
server over to a replacement in one registry change, drains retired sessions
and tells subscribers what happened (:class:`ManagerEvent`);
:func:`register_mcp_tools` starts every configured server inside one and
reports a status table (``status()``). :class:`ToolPins` pins each tool's
definition the first time a server lists it; a definition that changes later
is held back (``ToolHeld``) until accepted, as the server's ``pinTools`` says.

Hot reload (:mod:`toolsift.mcp_sessions.reload`): :class:`McpServerManager`
is a session group that applies a new config as a diff by server name, and
follows the config file.

Server settings come from :mod:`toolsift.config`.
"""

from .._public import publish
from ._bootstrap import register_mcp_tools as register_mcp_tools
from ._callbacks import ClientCallbacks as ClientCallbacks
from ._callbacks import ElicitationHandler as ElicitationHandler
from ._callbacks import LogHandler as LogHandler
from ._callbacks import SamplingHandler as SamplingHandler
from ._callbacks import SignInHandler as SignInHandler
from ._catalog import ServerCatalog as ServerCatalog
from ._group import McpSessionGroup as McpSessionGroup
from ._instructions import server_instructions as server_instructions
from ._oauth import FileTokenStorage as FileTokenStorage
from ._oauth import token_file as token_file
from ._options import SessionOptions as SessionOptions
from ._pins import ToolChange as ToolChange
from ._pins import ToolPins as ToolPins
from ._resources import ListMcpResources as ListMcpResources
from ._resources import ReadMcpResource as ReadMcpResource
from ._resources import resource_context as resource_context
from ._session import McpSession as McpSession
from ._state import SessionState as SessionState
from ._untrusted import guard_result as guard_result
from ._wrapper import VerbatimResults as VerbatimResults
from ._wrapper import tool_spec as tool_spec

__all__ = [
    "ClientCallbacks",
    "ElicitationHandler",
    "FileTokenStorage",
    "ListMcpResources",
    "LogHandler",
    "McpSession",
    "McpSessionGroup",
    "ReadMcpResource",
    "SamplingHandler",
    "ServerCatalog",
    "SessionOptions",
    "SessionState",
    "SignInHandler",
    "ToolChange",
    "ToolPins",
    "VerbatimResults",
    "guard_result",
    "register_mcp_tools",
    "resource_context",
    "server_instructions",
    "token_file",
    "tool_spec",
]

publish(globals(), __name__, __all__)
