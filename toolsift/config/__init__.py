"""The ``toolsift.json`` model and everything about reading it.

:func:`load_config` reads ``toolsift.json`` (or another MCP client's file: Claude
Desktop, ``.mcp.json``, VS Code, Cursor, Windsurf, Cline, Gemini CLI, FastMCP)
into a :class:`ToolsiftConfig`, reporting every problem with its field and line;
:func:`validate_config` returns a :class:`ConfigReport` instead of raising;
:class:`ConfigDiff` says what a new config changes, by server name.
``${VAR}`` expansion and ``secret://`` references live in
:mod:`toolsift.config.secrets`.

This package sits at the bottom beside :mod:`toolsift.registry`: it imports
nothing of sessions, skills or serving.
"""

from .._public import publish
from ._commands import CommandSettings as CommandSettings
from ._diff import ConfigDiff as ConfigDiff
from ._diff import diff_servers as diff_servers
from ._fingerprint import configured_settings as configured_settings
from ._fingerprint import launch_fingerprints as launch_fingerprints
from ._folders import CONFIG_NAME as CONFIG_NAME
from ._folders import PROJECT_CONFIGS as PROJECT_CONFIGS
from ._folders import user_folder as user_folder
from ._lint import permission_glob_warnings as permission_glob_warnings
from ._loading import load_config as load_config
from ._loading import parse_config as parse_config
from ._loading import validate_config as validate_config
from ._policies import ArgumentRule as ArgumentRule
from ._policies import UrlPolicy as UrlPolicy
from ._policies import argument_values as argument_values
from ._policies import urls_in as urls_in
from ._report import ConfigReport as ConfigReport
from ._report import ConfigWarning as ConfigWarning
from ._resolve import ResolvedServer as ResolvedServer
from ._resolve import child_environment as child_environment
from ._resolve import resolve_server as resolve_server
from ._search import SearchConfig as SearchConfig
from ._serve import ServeSettings as ServeSettings
from ._serve import SharedSettings as SharedSettings
from ._serve import is_loopback as is_loopback
from ._serve import validate_serve_settings as validate_serve_settings
from ._server import OAuthConfig as OAuthConfig
from ._server import ServerConfig as ServerConfig
from ._server import TransportKind as TransportKind
from ._toolsift import AgentConfig as AgentConfig
from ._toolsift import AuditConfig as AuditConfig
from ._toolsift import LimitsConfig as LimitsConfig
from ._toolsift import PermissionsConfig as PermissionsConfig
from ._toolsift import SkillsConfig as SkillsConfig
from ._toolsift import ToolRuleConfig as ToolRuleConfig
from ._toolsift import ToolsConfig as ToolsConfig
from ._toolsift import ToolsiftConfig as ToolsiftConfig
from ._trust import ProjectTrust as ProjectTrust
from ._trust import TrustCheck as TrustCheck
from ._trust import TrustedLaunches as TrustedLaunches

__all__ = [
    "CONFIG_NAME",
    "PROJECT_CONFIGS",
    "AgentConfig",
    "ArgumentRule",
    "AuditConfig",
    "CommandSettings",
    "ConfigDiff",
    "ConfigReport",
    "ConfigWarning",
    "LimitsConfig",
    "OAuthConfig",
    "PermissionsConfig",
    "ProjectTrust",
    "ResolvedServer",
    "SearchConfig",
    "ServeSettings",
    "ServerConfig",
    "SharedSettings",
    "SkillsConfig",
    "ToolRuleConfig",
    "ToolsConfig",
    "ToolsiftConfig",
    "TransportKind",
    "TrustCheck",
    "TrustedLaunches",
    "UrlPolicy",
    "argument_values",
    "child_environment",
    "configured_settings",
    "diff_servers",
    "is_loopback",
    "launch_fingerprints",
    "load_config",
    "parse_config",
    "permission_glob_warnings",
    "resolve_server",
    "urls_in",
    "user_folder",
    "validate_config",
    "validate_serve_settings",
]

publish(globals(), __name__, __all__)
