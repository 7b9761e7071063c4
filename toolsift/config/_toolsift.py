"""``ToolsiftConfig``: the whole ``toolsift.json`` file, section by section.

Relative paths resolve against the config file's folder (the ``base_dir``
validation context; see ``_model.py``). Load files with ``load_config`` or
``validate_config``, which also read Claude Desktop / ``.mcp.json`` files,
report every problem with its line, and keep good servers when others are bad.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator

from .._exceptions import ConfigError
from .._globs import compile_patterns
from ..registry import Level, Permissions, ToolRule
from ._commands import CommandSettings
from ._model import ConfigModel, resolve_path
from ._search import SearchConfig
from ._serve import ServeSettings
from ._server import ServerConfig, ServerEntry
from ._setting_types import DrainSeconds

__all__ = [
    "AgentConfig",
    "AuditConfig",
    "BuiltinsConfig",
    "LimitsConfig",
    "PermissionsConfig",
    "SkillsConfig",
    "ToolRuleConfig",
    "ToolsConfig",
    "ToolsiftConfig",
]

# "write", "WRITE", 20 or a Level; the message of Level.parse lists the names.
LevelName = Annotated[Level, BeforeValidator(Level.parse)]
DEFAULT_AGENT = "default"


def _check_globs(value: tuple[str, ...] | None, info: ValidationInfo) -> tuple[str, ...] | None:
    if value is not None:
        compile_patterns(value, where=info.field_name)
    return value


class ToolRuleConfig(ConfigModel):
    """An entry of ``tools.permissions``: what the tools matching ``match`` require.

    Attributes:
        match: Glob over canonical tool names (``github__delete_*``).
        required_level: Level the caller needs (``read``, ``write``, ``execute``, ``admin``).
        required_permissions: Custom permissions the caller needs.
    """

    match: str
    required_level: LevelName | None = None
    required_permissions: tuple[str, ...] = ()

    @field_validator("match")
    @classmethod
    def _check_match(cls, value: str, info: ValidationInfo) -> str:
        _check_globs((value,), info)
        return value

    def to_rule(self) -> ToolRule:
        """The registry's ``ToolRule`` for this entry."""
        return ToolRule(self.match, self.required_level, frozenset(self.required_permissions))


class BuiltinsConfig(ConfigModel):
    """``tools.builtins``: the workspace tools (``read_file``, ``write_file``, ``list_directory``,
    ``exec_shell``) for the agent loop: a ``Toolbox``, ``toolsift chat`` and the framework adapters.

    Off by default, since they let a model touch files; ``toolsift serve`` serves its own
    (``serve.builtins``, ``serve.workspace``, ``serve.commands``). Both confine them alike: the
    config's ``workspace``, no file that configures toolsift, ``exec_shell`` in a bubblewrap sandbox.

    Attributes:
        enabled: Register the workspace tools, with their bare names (what skills' allowed-tools name).
        commands: What ``exec_shell`` may run; by default nothing.
    """

    enabled: bool = False
    commands: CommandSettings = CommandSettings()


class ToolsConfig(ConfigModel):
    """The ``tools`` section.

    Attributes:
        mcp_servers: Servers by name (key ``mcpServers`` or ``mcp_servers``); each
            a ``StdioServer`` (``command``) or an ``HttpServer`` (``url``) carrying its key as ``name``.
        permissions: Rules that raise what matching tools require (layer 5).
        builtins: The workspace tools for the agent loop (see :class:`BuiltinsConfig`).
    """

    mcp_servers: dict[str, ServerEntry] = Field(default_factory=dict)
    permissions: tuple[ToolRuleConfig, ...] = ()
    builtins: BuiltinsConfig = BuiltinsConfig()

    @field_validator("mcp_servers")
    @classmethod
    def _name_servers(cls, value: dict[str, ServerConfig]) -> dict[str, ServerConfig]:
        return {name: server.with_name(name) for name, server in value.items()}


class PermissionsConfig(ConfigModel):
    """An agent's layer-5 permissions; see ``toolsift.registry.Permissions``.

    Attributes:
        level: The agent's level; ``write`` runs everything but execute/admin tools.
        denylist: Globs the agent may never call.
        allowlist: Globs the agent may call; absent means no allowlist.
        custom: Named permissions the agent holds.
        ask: Globs of tools whose calls wait for approval (deny > ask > allow).
        ask_destructive: Calls of tools that may be destructive by their MCP
            annotations wait for approval too.
    """

    level: LevelName = Level.WRITE
    denylist: tuple[str, ...] = ()
    allowlist: tuple[str, ...] | None = None
    custom: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    ask_destructive: bool = False

    _check = field_validator("denylist", "allowlist", "ask")(_check_globs)

    def to_permissions(self) -> Permissions:
        """The registry's ``Permissions`` for these settings; who approves is the caller's to add."""
        return Permissions(
            self.level, self.denylist, self.allowlist, frozenset(self.custom), self.ask, self.ask_destructive
        )


class LimitsConfig(ConfigModel):
    """Safety limits of the agent loop.

    Attributes:
        max_rounds: Model/tool rounds per user message.
        call_timeout: Seconds one tool call may take (a server's ``toolTimeout`` may be shorter).
        message_timeout: Seconds one user message may take in total.
        max_result_tokens: Approximate tokens (4 bytes each) of one tool result the
            model gets; the rest is cut with a note. None: no token cap.
        max_result_bytes: The same cap in bytes; the smaller of the two applies. None: no byte cap.
    """

    max_rounds: int = Field(default=10, ge=1)
    call_timeout: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    message_timeout: float = Field(default=120.0, gt=0, allow_inf_nan=False)
    max_result_tokens: int | None = Field(default=25_000, ge=1)
    max_result_bytes: int | None = Field(default=None, ge=1)


class AgentConfig(ConfigModel):
    """An agent profile (an entry of ``agents``).

    Attributes:
        name: The key under ``agents`` (``default`` for the built-in profile).
        allowed_tools: Layer 3, globs the agent may ever see; absent means no limit.
        permissions: Layer 5, what the agent may call.
        limits: Agent-loop limits.
        plan_mode: Offer and allow only read-only tools.
        tool_discovery: ``auto`` (``search_tools`` is offered in turns without a
            skill while internal tools are hidden), ``skills`` (skills alone decide
            what is shown) or ``search`` (``search_tools`` in every turn).
        unlock: How long tools found by ``search_tools`` stay callable: the whole
            ``conversation`` (the default: the tool list then only grows, which
            keeps the provider's prompt cache) or the rest of the ``turn`` (one user message).
        max_unlocked_tools: Unlocked tools kept at most; past it the least recently
            used one is dropped (None: no cap).
        max_unlocked_tokens: The same cap in estimated tokens of their declarations.
        instructions: The conversation's base instructions (the system prompt before any skill).
        model: The ``provider:model`` ``toolsift chat`` uses when ``--model`` is not given.
    """

    name: str = Field(default=DEFAULT_AGENT, exclude=True)
    allowed_tools: tuple[str, ...] | None = None
    permissions: PermissionsConfig = PermissionsConfig()
    limits: LimitsConfig = LimitsConfig()
    plan_mode: bool = False
    tool_discovery: Literal["auto", "skills", "search"] = "auto"
    unlock: Literal["turn", "conversation"] = "conversation"
    max_unlocked_tools: int | None = Field(default=16, ge=1)
    max_unlocked_tokens: int | None = Field(default=10_000, ge=1)
    instructions: str = ""
    model: str | None = None

    _check = field_validator("allowed_tools")(_check_globs)


class SkillsConfig(ConfigModel):
    """Where skills come from, and the budget of their templates.

    Attributes:
        paths: Project skill folders, searched in order (default
            ``<config folder>/.toolsift/skills``, then Claude Code's ``.claude/skills``).
        user_skills: Also load the user's own skill folders, ``~/.toolsift/skills`` and
            ``~/.claude/skills`` (after the first project folder, before the others).
        template_timeout: Seconds one template compile or render may take.
        template_max_output: Characters one render may produce.
        template_max_memory: Bytes of address space each template worker may use.
        template_workers: Template worker processes kept at most.
        plugins: Claude Code plugin folders (each holding ``.claude-plugin/plugin.json``), or folders
            of such plugins; their skills load after the skill folders, their servers belong to them.
        server_idle_seconds: How long a skill's own MCP servers keep running once no conversation
            uses the skill.
    """

    paths: tuple[Path, ...] = Field(default=(Path(".toolsift/skills"), Path(".claude/skills")), validate_default=True)
    user_skills: bool = True
    plugins: tuple[Path, ...] = ()
    server_idle_seconds: float = Field(default=300.0, gt=0, allow_inf_nan=False)
    # The defaults are TemplateSandbox's (toolsift.skills), which config may not import.
    template_timeout: float = Field(default=2.0, gt=0, allow_inf_nan=False)
    template_max_output: int = Field(default=1_000_000, ge=1)
    template_max_memory: int = Field(default=256 * 1024 * 1024, ge=1)
    template_workers: int = Field(default=2, ge=1)

    @field_validator("paths", "plugins")
    @classmethod
    def _resolve(cls, value: tuple[Path, ...], info: ValidationInfo) -> tuple[Path, ...]:
        return tuple(resolve_path(path, info) for path in value)


class AuditConfig(ConfigModel):
    """Where audit records go.

    Attributes:
        path: A JSON Lines file; absent keeps records in memory only.
        open_telemetry: Also emit an OpenTelemetry span per call to the global
            tracer provider (needs the ``otel`` extra).
    """

    path: Path | None = None
    open_telemetry: bool = False

    @field_validator("path")
    @classmethod
    def _resolve(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        return None if value is None else resolve_path(value, info)


class ToolsiftConfig(ConfigModel):
    """A whole config file.

    Attributes:
        path: The file it was loaded from (None when built from a dict or text).
        tools: Servers and tool rules.
        agents: Agent profiles by name.
        skills: Skill folders.
        workspace: The folder builtin file tools work in (default: the config's folder).
        roots: More folders offered to MCP servers as roots, after the workspace
            (relative paths are read from the config's folder).
        audit: Audit log settings.
        serve: How ``toolsift serve`` serves (transport, safety limits, policies).
        search: How tool search ranks and unlocks.
        drain_seconds: How long a removed or replaced server may finish its calls in flight,
            unless the server sets its own (None: the application's default, 30).
    """

    path: Path | None = Field(default=None, exclude=True)
    tools: ToolsConfig = ToolsConfig()
    agents: dict[str, AgentConfig] = Field(default_factory=dict)
    # `{}` rather than an instance so the default validates with the base_dir context.
    skills: SkillsConfig = Field(default={}, validate_default=True)
    workspace: Path = Field(default=Path(), validate_default=True)
    roots: tuple[Path, ...] = ()
    audit: AuditConfig = AuditConfig()
    # `{}` so the default validates with the base_dir context (relative workspace paths).
    serve: ServeSettings = Field(default={}, validate_default=True)
    search: SearchConfig = SearchConfig()
    drain_seconds: DrainSeconds | None = None

    @field_validator("agents")
    @classmethod
    def _name_agents(cls, value: dict[str, AgentConfig]) -> dict[str, AgentConfig]:
        return {name: agent.model_copy(update={"name": name}) for name, agent in value.items()}

    @field_validator("workspace")
    @classmethod
    def _resolve(cls, value: Path, info: ValidationInfo) -> Path:
        return resolve_path(value, info)

    @field_validator("roots")
    @classmethod
    def _resolve_roots(cls, value: tuple[Path, ...], info: ValidationInfo) -> tuple[Path, ...]:
        return tuple(resolve_path(path, info) for path in value)

    @property
    def servers(self) -> dict[str, ServerConfig]:
        """The usable servers by name (``tools.mcpServers``)."""
        return self.tools.mcp_servers

    @property
    def tool_rules(self) -> tuple[ToolRule, ...]:
        """``tools.permissions`` as registry ``ToolRule`` objects, in file order."""
        return tuple(rule.to_rule() for rule in self.tools.permissions)

    def agent(self, name: str | None = None) -> AgentConfig:
        """Return the agent profile ``name``, or the default one.

        With no name: the profile called ``default`` when the file has one,
        else an unrestricted profile (no allowed-tools limit, level ``write``).

        Raises:
            ConfigError: When ``name`` is given and the file has no such agent;
                the message lists the configured ones.
        """
        if name is None:
            return self.agents.get(DEFAULT_AGENT) or AgentConfig()
        if name not in self.agents:
            known = ", ".join(sorted(self.agents)) or "none"
            raise ConfigError(f"no agent named {name!r}; configured agents: {known}", path=self.path, field="agents")
        return self.agents[name]
