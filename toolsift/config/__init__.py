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
from ._loading import load_config as load_config
from ._loading import parse_config as parse_config
from ._loading import validate_config as validate_config
from ._server import HttpServer as HttpServer
from ._server import ServerConfig as ServerConfig
from ._server import StdioServer as StdioServer
from ._skill_grants import SkillGrants as SkillGrants
from ._toolsift import ToolsiftConfig as ToolsiftConfig
from ._trust import ProjectTrust as ProjectTrust
from ._trust import TrustedLaunches as TrustedLaunches

__all__ = [
    "HttpServer",
    "ProjectTrust",
    "ServerConfig",
    "SkillGrants",
    "StdioServer",
    "ToolsiftConfig",
    "TrustedLaunches",
    "load_config",
    "parse_config",
    "validate_config",
]

publish(globals(), __name__, __all__)
