"""toolsift: many MCP servers, one agent, only the tools that matter this turn.

The package root publishes the exception tree, which every room raises from;
every other public name has one home: ``toolsift.toolbox`` (the facade),
``toolsift.registry`` (tools, the registry, ``@tool``), ``toolsift.mcp_sessions``,
``toolsift.skills``, ``toolsift.agent`` and the other rooms. Importing the root
loads none of them (``toolsift --version`` pays for nothing else).
"""

from . import _exceptions
from ._exceptions import AgentError as AgentError
from ._exceptions import ConfigError as ConfigError
from ._exceptions import DuplicateTool as DuplicateTool
from ._exceptions import InvalidArguments as InvalidArguments
from ._exceptions import InvalidPattern as InvalidPattern
from ._exceptions import InvalidToolName as InvalidToolName
from ._exceptions import LimitExceeded as LimitExceeded
from ._exceptions import PermissionDenied as PermissionDenied
from ._exceptions import PolicyDenied as PolicyDenied
from ._exceptions import RegistryError as RegistryError
from ._exceptions import SecretError as SecretError
from ._exceptions import ServerDraining as ServerDraining
from ._exceptions import ServerUnavailable as ServerUnavailable
from ._exceptions import SessionError as SessionError
from ._exceptions import SignInRequired as SignInRequired
from ._exceptions import SkillArgumentError as SkillArgumentError
from ._exceptions import SkillError as SkillError
from ._exceptions import SkillNotFound as SkillNotFound
from ._exceptions import SkillParseError as SkillParseError
from ._exceptions import SkillRenderError as SkillRenderError
from ._exceptions import SkillUnavailable as SkillUnavailable
from ._exceptions import TemplateError as TemplateError
from ._exceptions import ToolHeld as ToolHeld
from ._exceptions import ToolNotFound as ToolNotFound
from ._exceptions import ToolsiftError as ToolsiftError
from ._exceptions import UnknownFormat as UnknownFormat
from ._public import publish

__version__ = "0.1.0"

__all__ = [
    "AgentError",
    "ConfigError",
    "DuplicateTool",
    "InvalidArguments",
    "InvalidPattern",
    "InvalidToolName",
    "LimitExceeded",
    "PermissionDenied",
    "PolicyDenied",
    "RegistryError",
    "SecretError",
    "ServerDraining",
    "ServerUnavailable",
    "SessionError",
    "SignInRequired",
    "SkillArgumentError",
    "SkillError",
    "SkillNotFound",
    "SkillParseError",
    "SkillRenderError",
    "SkillUnavailable",
    "TemplateError",
    "ToolHeld",
    "ToolNotFound",
    "ToolsiftError",
    "UnknownFormat",
]

publish(globals(), __name__, _exceptions.__all__)
