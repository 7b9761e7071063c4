"""MCP sessions: server config, secrets, sessions, bootstrap, hot reload and serving.

Config: :func:`load_config` reads ``toolsift.json`` or a Claude Desktop /
``.mcp.json`` file into a :class:`ToolsiftConfig`; :func:`resolve_server` turns a
:class:`ServerConfig` into the values a transport needs, right before it connects.

Sessions: :class:`McpSession` is one supervised connection (stdio, Streamable
HTTP or SSE, both protocol eras) shared by every task that calls it; it
restarts crashed servers with backoff and keeps the registry in step with the
server's tools (:class:`McpToolWrapper`, ``server__tool``). :func:`register_mcp_tools`
starts every configured server in parallel inside an :class:`McpSessionGroup`
and reports a status table (:func:`status_rows`, :func:`format_status`).

Hot reload: :class:`McpServerManager` owns every session, applies a new config
as a diff by server name (:class:`ConfigDiff`), drains removed and replaced
sessions, follows the config file with watchfiles, and tells subscribers what
happened (:class:`ManagerEvent`).
"""

from .._public import publish
from ._bootstrap import register_mcp_tools as register_mcp_tools
from ._catalog import ServerCatalog as ServerCatalog
from ._config import ServerConfig as ServerConfig
from ._config import TransportKind as TransportKind
from ._diff import ConfigDiff as ConfigDiff
from ._group import McpSessionGroup as McpSessionGroup
from ._group import format_status as format_status
from ._group import status_rows as status_rows
from ._loading import ConfigReport as ConfigReport
from ._loading import ConfigWarning as ConfigWarning
from ._loading import load_config as load_config
from ._loading import parse_config as parse_config
from ._loading import validate_config as validate_config
from ._manager import McpServerManager as McpServerManager
from ._manager_events import ManagerEvent as ManagerEvent
from ._manager_events import ManagerEventKind as ManagerEventKind
from ._options import RestartPolicy as RestartPolicy
from ._options import SessionOptions as SessionOptions
from ._resolvers import EnvSecretResolver as EnvSecretResolver
from ._resolvers import FileSecretResolver as FileSecretResolver
from ._resolvers import SecretReference as SecretReference
from ._resolvers import SecretResolver as SecretResolver
from ._resolvers import register_secret_resolver as register_secret_resolver
from ._resolvers import unregister_secret_resolver as unregister_secret_resolver
from ._resources import ListMcpResources as ListMcpResources
from ._resources import ReadMcpResource as ReadMcpResource
from ._resources import ResourceSession as ResourceSession
from ._resources import resource_context as resource_context
from ._secrets import ResolvedServer as ResolvedServer
from ._secrets import child_environment as child_environment
from ._secrets import resolve_server as resolve_server
from ._session import McpSession as McpSession
from ._session_table import ServerStatus as ServerStatus
from ._state import SessionEvent as SessionEvent
from ._state import SessionState as SessionState
from ._state import SessionStatus as SessionStatus
from ._toolsift_config import AgentConfig as AgentConfig
from ._toolsift_config import AuditConfig as AuditConfig
from ._toolsift_config import LimitsConfig as LimitsConfig
from ._toolsift_config import PermissionsConfig as PermissionsConfig
from ._toolsift_config import SkillsConfig as SkillsConfig
from ._toolsift_config import ToolRuleConfig as ToolRuleConfig
from ._toolsift_config import ToolsConfig as ToolsConfig
from ._toolsift_config import ToolsiftConfig as ToolsiftConfig
from ._wrapper import McpToolWrapper as McpToolWrapper

__all__ = [
    "AgentConfig",
    "AuditConfig",
    "ConfigDiff",
    "ConfigReport",
    "ConfigWarning",
    "EnvSecretResolver",
    "FileSecretResolver",
    "LimitsConfig",
    "ListMcpResources",
    "ManagerEvent",
    "ManagerEventKind",
    "McpServerManager",
    "McpSession",
    "McpSessionGroup",
    "McpToolWrapper",
    "PermissionsConfig",
    "ReadMcpResource",
    "ResolvedServer",
    "ResourceSession",
    "RestartPolicy",
    "SecretReference",
    "SecretResolver",
    "ServerCatalog",
    "ServerConfig",
    "ServerStatus",
    "SessionEvent",
    "SessionOptions",
    "SessionState",
    "SessionStatus",
    "SkillsConfig",
    "ToolRuleConfig",
    "ToolsConfig",
    "ToolsiftConfig",
    "TransportKind",
    "child_environment",
    "format_status",
    "load_config",
    "parse_config",
    "register_mcp_tools",
    "register_secret_resolver",
    "resolve_server",
    "resource_context",
    "status_rows",
    "unregister_secret_resolver",
    "validate_config",
]

publish(globals(), __name__, __all__)
