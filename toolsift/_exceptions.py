"""Every error toolsift raises, in one tree.

One ``except toolsift.ToolsiftError`` catches them all; the subtrees tell which
room of the product the problem comes from::

    ToolsiftError
    ├── ConfigError                  (also ValueError) bad config file or field
    ├── RegistryError
    │   ├── ToolNotFound             (also LookupError) no such tool or alias
    │   │   └── ToolHeld             a tool changed since it was pinned, held back until accepted
    │   ├── DuplicateTool            (also ValueError) a name is already registered
    │   ├── InvalidToolName          (also ValueError) a name breaks the naming rules
    │   ├── InvalidPattern           (also ValueError) a glob uses characters it cannot
    │   ├── UnknownFormat            (also LookupError) no such schema format
    │   ├── PermissionDenied         a call failed one of the five visibility layers
    │   ├── InvalidArguments         (also ValueError) arguments fail the inputSchema
    │   └── PolicyDenied             a call breaks a serving policy (workspace, command, URL, argument)
    ├── SessionError
    │   ├── ServerUnavailable        the server is connecting, restarting or broken
    │   ├── ServerDraining           the server was removed or changed and is draining
    │   ├── SignInRequired           an OAuth server wants a person to sign in first
    │   └── SecretError              a ``${VAR}`` or ``secret://`` reference cannot resolve
    ├── SkillError
    │   ├── SkillParseError          (also ValueError) a SKILL.md is malformed
    │   ├── SkillNotFound            (also LookupError) no skill by that name
    │   ├── SkillArgumentError       (also ValueError) ``/use`` arguments do not fit
    │   ├── SkillRenderError         the body template failed to render
    │   ├── SkillUnavailable         a skill's own MCP servers cannot start
    │   └── TemplateError            a template sandbox refused to compile or render
    └── AgentError
        └── LimitExceeded            a round, call or message limit of the agent loop

Misuse by the caller or the model raises one of these; a tool that runs and fails
returns a ``ToolResult`` with ``is_error=True`` instead (see ``registry.ToolResult``).
Nothing raises the bare ``ToolsiftError``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from pathlib import Path

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


class ToolsiftError(Exception):
    """Base of every toolsift exception; never raised on its own."""


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` naming the known names closest to a mistyped one, or ``""`` when none is close."""
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
    if not close:
        return ""
    # Names that share a long prefix (server__...) all come close: keep those about as close as the best.
    best = difflib.SequenceMatcher(None, name, close[0]).ratio()
    close = [match for match in close if difflib.SequenceMatcher(None, name, match).ratio() >= best - 0.1]
    return f"; did you mean {' or '.join(repr(match) for match in close)}?"


def _where(path: str | Path | None, line: int | None) -> str:
    if path is None:
        return ""
    return f"{path}:{line}: " if line is not None else f"{path}: "


class ConfigError(ToolsiftError, ValueError):
    """Raised when a config file or one of its fields is invalid.

    Attributes:
        path: The config file, when the problem came from one.
        field: Dotted path of the offending field (``tools.mcpServers.git.timeout``).
        line: 1-based line in the file, where it can be known.
        reason: What was wrong and what was expected.
    """

    def __init__(
        self,
        reason: str,
        *,
        path: str | Path | None = None,
        field: str | None = None,
        line: int | None = None,
    ) -> None:
        self.path = path
        self.field = field
        self.line = line
        self.reason = reason
        where = _where(path, line)
        prefix = f"{field}: " if field else ""
        super().__init__(f"{where}{prefix}{reason}")


class RegistryError(ToolsiftError):
    """Base of errors about tools, names, patterns, formats and calls."""


class ToolNotFound(RegistryError, LookupError):
    """Raised when a name is neither a registered tool nor a known alias."""

    def __init__(self, name: str, *, hint: str | None = None, known: Iterable[str] = ()) -> None:
        self.name = name
        message = f"Unknown tool {name!r}{_did_you_mean(name, known)}"
        super().__init__(f"{message}; {hint}" if hint else message)


class ToolHeld(ToolNotFound):
    """Raised when calling a tool held back because its server changed its definition since it was pinned.

    It is a ``ToolNotFound``: the tool is not listed, and whoever handles an
    unknown tool handles this one; the message says how to accept the change.
    """

    def __init__(self, name: str, server: str, reason: str) -> None:
        self.name = name
        self.server = server
        # ToolNotFound's own message ("Unknown tool ...") would mislead: the tool is known, and changed.
        RegistryError.__init__(self, f"Tool {name!r} is held back: {reason}")


class DuplicateTool(RegistryError, ValueError):
    """Raised when registering a name that is already taken; nothing is overwritten."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"Tool {name!r} is already registered; unregister it first or use replace_server()")


class InvalidToolName(RegistryError, ValueError):
    """Raised when a tool or server name breaks the naming rules."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason
        super().__init__(f"Invalid tool name {name!r}: {reason}")


class InvalidPattern(RegistryError, ValueError):
    """Raised when a glob pattern uses characters a toolsift glob cannot hold."""

    def __init__(self, pattern: str, reason: str, *, where: str | None = None) -> None:
        self.pattern = pattern
        self.reason = reason
        self.where = where
        location = f" in {where}" if where else ""
        super().__init__(f"Pattern {pattern!r}{location} is not a valid glob: {reason}")


class UnknownFormat(RegistryError, LookupError):
    """Raised when a schema format name is not one of the registered formats."""

    def __init__(self, name: str, available: Sequence[str]) -> None:
        self.name = name
        self.available = tuple(available)
        super().__init__(f"Unknown schema format {name!r}; available: {', '.join(sorted(available))}")


class PermissionDenied(RegistryError):
    """Raised when a call fails one of the five visibility/permission layers.

    Attributes:
        tool: The canonical tool name.
        layer: 1 internal_only, 2 registry, 3 agent allowed_tools,
            4 skill allowed-tools, 5 permission checks.
        reason: Which rule refused the call.
    """

    LAYER_NAMES = {
        1: "internal_only",
        2: "registry",
        3: "agent allowed_tools",
        4: "skill allowed-tools",
        5: "permission checks",
    }

    def __init__(self, tool: str, layer: int, reason: str) -> None:
        self.tool = tool
        self.layer = layer
        self.reason = reason
        name = self.LAYER_NAMES.get(layer, "?")
        super().__init__(f"Tool {tool!r} denied at layer {layer} ({name}): {reason}")


class InvalidArguments(RegistryError, ValueError):
    """Raised when call arguments fail the tool's inputSchema; the tool does not run."""

    def __init__(self, tool: str, errors: Sequence[str]) -> None:
        self.tool = tool
        self.errors = tuple(errors)
        super().__init__(f"Invalid arguments for tool {tool!r}: {'; '.join(self.errors)}")


class PolicyDenied(RegistryError):
    """Raised when a call breaks a policy: a path outside the workspace, a program
    off the allowlist, an argument or URL a policy refuses, a size limit.

    Builtin tools and the serving pipeline turn it into a tool error result.

    Attributes:
        policy: Which policy refused (``workspace``, ``command``, ``url``,
            ``argument``, ``size``).
        reason: What was refused and, where there is one, how to allow it.
        tool: The tool called, when known.
    """

    def __init__(self, policy: str, reason: str, *, tool: str | None = None) -> None:
        self.policy = policy
        self.reason = reason
        self.tool = tool
        subject = f"Tool {tool!r} refused" if tool else "Refused"
        super().__init__(f"{subject} by the {policy} policy: {reason}")


class SessionError(ToolsiftError):
    """Base of errors about MCP server sessions."""


class ServerUnavailable(SessionError):
    """Raised when a call reaches a server that is not ready (connecting, restarting, failed, closed)."""

    def __init__(self, server: str, state: str, reason: str | None = None) -> None:
        self.server = server
        self.state = state
        self.reason = reason
        detail = f": {reason}" if reason else ""
        super().__init__(f"MCP server {server!r} is {state}{detail}")


class ServerDraining(SessionError):
    """Raised when a new call reaches a server that was removed or changed and is draining."""

    def __init__(self, server: str, since: str) -> None:
        self.server = server
        self.since = since
        super().__init__(f"MCP server {server!r} is draining (removed at {since}); no new calls are accepted")


class SignInRequired(SessionError):
    """Raised when an OAuth server needs a person to sign in and nobody can be asked there."""

    def __init__(self, server: str) -> None:
        self.server = server
        super().__init__(
            f"MCP server {server!r} needs you to sign in (OAuth): run `toolsift auth login {server}`, then start again"
        )


class SecretError(SessionError):
    """Raised when a ``${VAR}`` or ``secret://`` reference cannot be resolved.

    The message names the reference and where it was used, never a value.
    """

    def __init__(self, reference: str, reason: str, *, server: str | None = None, field: str | None = None) -> None:
        self.reference = reference
        self.server = server
        self.field = field
        where = ""
        if server:
            where = f" in server {server!r}" + (f" field {field!r}" if field else "")
        super().__init__(f"Cannot resolve {reference!r}{where}: {reason}")


class SkillError(ToolsiftError):
    """Base of errors about skills."""


class SkillParseError(SkillError, ValueError):
    """Raised when a SKILL.md cannot be parsed or fails validation.

    Attributes:
        path: The SKILL.md file.
        field: The front-matter field at fault, if any.
        line: 1-based line in the file, where it can be known.
        reason: What was wrong and what was expected.
    """

    def __init__(
        self,
        reason: str,
        *,
        path: str | Path | None = None,
        field: str | None = None,
        line: int | None = None,
    ) -> None:
        self.path = path
        self.field = field
        self.line = line
        self.reason = reason
        prefix = f"field {field!r}: " if field else ""
        super().__init__(f"{_where(path, line)}{prefix}{reason}")


class SkillNotFound(SkillError, LookupError):
    """Raised when ``/use`` or a lookup names a skill that is not loaded."""

    def __init__(self, name: str, available: Sequence[str] = ()) -> None:
        self.name = name
        self.available = tuple(available)
        listing = f"; available: {', '.join(sorted(available))}" if available else "; no skills are loaded"
        super().__init__(f"Unknown skill {name!r}{_did_you_mean(name, available)}{listing}")


class SkillArgumentError(SkillError, ValueError):
    """Raised when the arguments given to a skill do not fit its variables."""

    def __init__(self, skill: str, reason: str) -> None:
        self.skill = skill
        self.reason = reason
        super().__init__(f"Skill {skill!r}: {reason}")


class SkillUnavailable(SkillError):
    """Raised when ``/use`` names a skill whose own MCP servers cannot start (a bad server file, a
    name clash, a launch the project's trust does not cover, a server that failed to start).

    Attributes:
        skill: The skill's name.
        reason: Why, naming the server and the file it comes from where known.
    """

    def __init__(self, skill: str, reason: str) -> None:
        self.skill = skill
        self.reason = reason
        super().__init__(f"Skill {skill!r} cannot be used: {reason}")


class SkillRenderError(SkillError):
    """Raised when a skill's body template fails to render (undefined variable, unsafe access)."""

    def __init__(self, skill: str, reason: str, *, path: str | Path | None = None) -> None:
        self.skill = skill
        self.reason = reason
        self.path = path
        where = f" ({path})" if path else ""
        super().__init__(f"Skill {skill!r}{where} failed to render: {reason}")


class TemplateError(SkillError):
    """Raised when a ``TemplateSandbox`` cannot compile or render a template.

    A syntax error, a name that is not allowed, a sandbox refusal, or a time,
    output or memory budget exceeded. Skill code turns it into a
    ``SkillParseError`` or ``SkillRenderError`` that names the skill.

    Attributes:
        reason: What went wrong.
        line: The template line, where known.
        name: For a name that is not allowed, the name.
    """

    def __init__(self, reason: str, *, line: int | None = None, name: str | None = None) -> None:
        self.reason = reason
        self.line = line
        self.name = name
        super().__init__(reason)


class AgentError(ToolsiftError):
    """Base of errors raised by the agent-loop helpers."""


class LimitExceeded(AgentError):
    """Raised when an agent loop reaches a configured safety limit."""

    def __init__(self, limit: str, value: float) -> None:
        self.limit = limit
        self.value = value
        super().__init__(f"Agent limit reached: {limit} = {value:g}")
