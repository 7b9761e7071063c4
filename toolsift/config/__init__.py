"""The ``toolsift.json`` model and everything about reading it.

:func:`load_config` reads ``toolsift.json`` (or another MCP client's file: Claude
Desktop, ``.mcp.json``, VS Code, Cursor, Windsurf, Cline, Gemini CLI, FastMCP)
into a :class:`ToolsiftConfig`, reporting every problem with its field and line;
:func:`validate_config` returns a :class:`ConfigReport` instead of raising.
``${VAR}`` expansion and ``secret://`` references live in
:mod:`toolsift.config.secrets`.

This package sits at the bottom beside :mod:`toolsift.registry`: it imports
nothing of sessions, skills or serving.
"""

from .._public import publish
from ._commands import CommandSettings as CommandSettings
from ._fingerprint import configured_settings as configured_settings
from ._lint import permission_glob_warnings as permission_glob_warnings
from ._loading import load_config as load_config
from ._loading import parse_config as parse_config
from ._loading import validate_config as validate_config
from ._policies import ArgumentRule as ArgumentRule
from ._policies import UrlPolicy as UrlPolicy
from ._report import ConfigReport as ConfigReport
from ._report import ConfigWarning as ConfigWarning
from ._resolve import child_environment as child_environment
from ._resolve import resolve_server as resolve_server
from ._serve import ServeSettings as ServeSettings
from ._serve import SharedSettings as SharedSettings
from ._serve import validate_serve_settings as validate_serve_settings
from ._server import HttpServer as HttpServer
from ._server import OAuthConfig as OAuthConfig
from ._server import ServerConfig as ServerConfig
from ._server import StdioServer as StdioServer
from ._skill_grants import SkillGrants as SkillGrants
from ._toolsift import AgentConfig as AgentConfig
from ._toolsift import LimitsConfig as LimitsConfig
from ._toolsift import ToolsiftConfig as ToolsiftConfig
from ._trust import ProjectTrust as ProjectTrust
from ._trust import TrustCheck as TrustCheck
from ._trust import TrustedLaunches as TrustedLaunches

__all__ = [
    "AgentConfig",
    "ArgumentRule",
    "CommandSettings",
    "ConfigReport",
    "ConfigWarning",
    "HttpServer",
    "LimitsConfig",
    "OAuthConfig",
    "ProjectTrust",
    "ServeSettings",
    "ServerConfig",
    "SharedSettings",
    "SkillGrants",
    "StdioServer",
    "ToolsiftConfig",
    "TrustCheck",
    "TrustedLaunches",
    "UrlPolicy",
    "child_environment",
    "configured_settings",
    "load_config",
    "parse_config",
    "permission_glob_warnings",
    "resolve_server",
    "validate_config",
    "validate_serve_settings",
]

publish(globals(), __name__, __all__)
