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
from ._group import McpSessionGroup as McpSessionGroup
from ._options import SessionOptions as SessionOptions
from ._session import McpSession as McpSession

__all__ = [
    "ClientCallbacks",
    "ElicitationHandler",
    "LogHandler",
    "McpSession",
    "McpSessionGroup",
    "SamplingHandler",
    "SessionOptions",
    "SignInHandler",
    "register_mcp_tools",
]

publish(globals(), __name__, __all__)
