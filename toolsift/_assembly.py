"""The composition root: what one config file describes, built once for a Toolbox and a ToolsiftServer alike.

``Toolbox`` (the agent side) and ``ToolsiftServer`` (the serving side) hold
the same parts: the registry with the config's tool rules and audit log,
the skills loader and its template sandbox, the MCP server manager with its
lazy starts and config watch, and the search index behind ``search_tools``.
:class:`Assembly` builds them in one place, so a rule of how they fit (which
servers are unsearchable, which lazy servers a search starts, what is traced)
is written once. What differs between the two is passed in as options.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, final

import anyio
from anyio.abc import TaskStatus

from ._folders import user_folder, user_folders
from ._skill_servers import Declared, LaunchPath, Plugin, SkillServers, load_plugins, owned_servers, untrusted_path
from .builtins import CommandPolicy, Workspace, builtin_tools
from .builtins._internal import FolderFiles, FollowedProtection, builtin_tool_names
from .config import ServerConfig, ToolsiftConfig, TrustedLaunches
from .config._internal import AgentConfig, ConfigWarning, permission_glob_warnings
from .mcp_sessions import ClientCallbacks, SessionOptions
from .mcp_sessions.reload import McpServerManager
from .pipeline._internal import trace_configured_calls
from .registry import AuditLog, Permissions, ToolRegistry
from .search import Discovery, SearchIndex, SearchToolsTool, SkillCatalog
from .search._internal import BackendName, server_descriptions
from .skills import Skill, SkillsLoader
from .skills._internal import shared_sandbox

__all__ = [
    "Assembly",
    "project_skill_launches",
    "skills_loader",
    "unprovided_skill_tools",
    "users_own_folders",
]

# Warnings about the config go where loading it logs its own.
config_logger = logging.getLogger("toolsift.config")


def skills_loader(
    config: ToolsiftConfig, *, user_dir: str | os.PathLike[str] | None = None, plugins: Iterable[Plugin] | None = None
) -> SkillsLoader:
    """The loader for the config's ``skills`` section: its folders, and templates within its limits.

    Args:
        config: The loaded config.
        user_dir: One user skill folder to read instead of ``~/.toolsift/skills`` and
            ``~/.claude/skills``; user folders are read only when ``skills.userSkills`` is true.
        plugins: The config's plugins, read (by default read here; one that cannot load is left out):
            their skill folders come last.
    """
    if plugins is None:
        plugins = load_plugins(config.skills.plugins)[0]
    settings = config.skills
    paths = list(settings.paths)
    sandbox = shared_sandbox(
        timeout=settings.template_timeout,
        max_output=settings.template_max_output,
        max_memory=settings.template_max_memory,
        workers=settings.template_workers,
    )
    return SkillsLoader(
        project=paths[0] if paths else None,
        extra=[*paths[1:], *(folder for plugin in plugins for folder in plugin.skill_folders)],
        sandbox=sandbox,
        user=user_folders(settings.user_skills, user_dir),
    )


def users_own_folders(user_dir: str | os.PathLike[str] | None = None) -> list[Path]:
    """The folders that hold only what the person running toolsift put there: their skills, plugins and config.

    A skill or plugin there is theirs; one anywhere else may have come with a project.
    """
    home = Path.home()
    return [*user_folders(True, user_dir), user_folder(), home / ".toolsift", home / ".claude"]


def project_skill_launches(
    config: ToolsiftConfig, *, user_dir: str | os.PathLike[str] | None = None
) -> list[tuple[Declared, LaunchPath]]:
    """The servers skills and plugins bring whose start reaches outside the person's own folders.

    Each comes with the first path that does (the file that declares it, ``${CLAUDE_PLUGIN_ROOT}``,
    a relative path), judged from the current folder. What ``toolsift trust`` records beside the
    config, so that they start under the same consent as the project's own servers (see
    :class:`~toolsift._skill_servers.SkillServers`).
    """
    plugins, _ = load_plugins(config.skills.plugins)
    skills = skills_loader(config, user_dir=user_dir, plugins=plugins).load()
    own = users_own_folders(user_dir)
    launches: dict[tuple[Path, str], tuple[Declared, LaunchPath]] = {}
    for entry in owned_servers(skills, plugins).values():
        for declared in entry.declared if entry.problem is None else ():
            outside = untrusted_path(declared, own, cwd=Path.cwd())
            if outside is not None:  # a plugin's server is listed once, however many of its skills own it
                launches[(declared.file, declared.server.name)] = (declared, outside)
    return list(launches.values())


def unprovided_skill_tools(config: ToolsiftConfig, skills: Iterable[Skill]) -> list[ConfigWarning]:
    """Skills' ``allowed-tools`` entries naming a builtin tool that the agent loop does not get.

    A builtin name (``read_file``, as skills write it: patterns match a tool's canonical name) is
    provided by ``toolsift serve`` (``serve.builtins``, on by default) and, only with
    ``tools.builtins.enabled``, by a Toolbox, ``toolsift chat`` and the adapters; elsewhere the
    model's call fails as an unknown tool. Entries that name servers, wildcards and Claude Code's own
    tools are judged by the pattern check of ``toolsift check``.
    """
    if config.tools.builtins.enabled:
        return []
    builtins = set(builtin_tool_names())
    where = "only toolsift serve provides it" if config.serve.builtins else "no source provides it"
    return [
        ConfigWarning(
            f"skill {skill.name!r}: allowed-tools entry {entry!r} is a workspace tool and {where}; "
            'toolsift chat, a Toolbox and the adapters get it with "tools": {"builtins": {"enabled": true}}',
            path=skill.path,
            field="allowed-tools",
        )
        for skill in skills
        for entry in skill.allowed_tools
        if entry in builtins
    ]


@final
class Assembly:
    """The registry, skills, MCP sessions and tool search of one config, built together.

    Built parts are plain attributes; :meth:`running` starts what runs
    (sessions, the index's upkeep, tracing) and :meth:`watch` follows the
    config file and the skill folders.

    Args:
        config: The loaded config.
        user_skills_dir: The user's skill folder (see :func:`skills_loader`).
        servers: Build an :class:`McpServerManager` for the config's servers.
        callbacks: How servers' requests are answered (the config's defaults when None).
        drain_seconds: See :class:`McpServerManager`.
        trust: See :class:`McpServerManager`.
        search: Build the search index and register ``search_tools`` (in the internal tier).
        search_skills: Index the skills ``/use`` can activate (SKILL.md skills and servers' prompts) too.
        search_backend: The ranking, instead of the config's ``search.backend``.
        builtins: Register the workspace tools when the config's ``tools.builtins`` enables them
            (the agent loop; a server registers its own with :meth:`register_workspace_tools`).
        record_starts: Audit each call's start before it runs (see :class:`AuditLog`).
        upstream_names: See :class:`ToolRegistry`.
        settle_heap: See :class:`ToolRegistry`; only for a process toolsift owns.
    """

    def __init__(
        self,
        config: ToolsiftConfig,
        *,
        user_skills_dir: str | os.PathLike[str] | None = None,
        servers: bool = True,
        callbacks: ClientCallbacks | None = None,
        drain_seconds: float | None = None,
        trust: TrustedLaunches | None = None,
        search: bool = True,
        search_skills: bool = True,
        search_backend: BackendName | None = None,
        builtins: bool = False,
        record_starts: bool = False,
        upstream_names: bool = False,
        settle_heap: bool = False,
    ) -> None:
        self.config = config
        self.registry = ToolRegistry(
            rules=config.tool_rules,
            audit=AuditLog(config.audit.path, record_starts=record_starts),
            upstream_names=upstream_names,
            settle_heap=settle_heap,
        )
        self.plugins, plugin_problems = load_plugins(config.skills.plugins)
        for problem in plugin_problems:
            config_logger.warning("%s; the plugin is not loaded", problem)
        self.skills = skills_loader(config, user_dir=user_skills_dir, plugins=self.plugins)
        user_skill_folders = user_folders(config.skills.user_skills, user_skills_dir)
        self.protection = FollowedProtection(self.config_in_force, user_skill_folders=user_skill_folders)
        self.manager: McpServerManager | None = None
        self.skill_servers: SkillServers | None = None
        if servers:
            self._run_servers(callbacks, drain_seconds, trust, user_skills_dir)
        self.catalog = SkillCatalog(self.skills, self.manager)
        self.index: SearchIndex | None = None
        if search:
            manager = self.manager
            self.index = SearchIndex(
                self.registry,
                self.catalog if search_skills else None,
                backend=search_backend or config.search.backend,
                unsearchable=self.unsearchable,
                server_descriptions=lambda: server_descriptions(manager or {}),
            )
        if builtins and config.tools.builtins.enabled:
            self.register_workspace_tools(config.workspace, CommandPolicy.from_settings(config.tools.builtins.commands))

    def _run_servers(
        self,
        callbacks: ClientCallbacks | None,
        drain_seconds: float | None,
        trust: TrustedLaunches | None,
        user_skills_dir: str | os.PathLike[str] | None,
    ) -> None:
        """The manager of the config's servers, and the runner of the servers skills and plugins own."""
        config = self.config
        options = SessionOptions.for_config(config)
        if callbacks is not None:
            options = replace(options, callbacks=callbacks)
        self.manager = McpServerManager(
            self.registry, config, options=options, drain_seconds=drain_seconds, trust=trust
        )
        loader = self.skills
        self.skill_servers = SkillServers(
            self.registry,
            lambda: loader.skills,
            plugins=self.plugins,
            configured=self.servers,
            config_path=config.path,
            options=options,
            trust=trust,
            user_folders=users_own_folders(user_skills_dir),
            idle_seconds=config.skills.server_idle_seconds,
        )

    @property
    def sessions(self) -> McpServerManager:
        """The MCP server manager.

        Raises:
            RuntimeError: When the assembly was built with ``servers=False``.
        """
        if self.manager is None:
            raise RuntimeError("This assembly runs no MCP servers: it was built with servers=False")
        return self.manager

    def servers(self) -> Iterable[ServerConfig]:
        """The servers in force: the config's, or those the last reload applied."""
        return self.manager.servers.values() if self.manager is not None else self.config.servers.values()

    def config_in_force(self) -> ToolsiftConfig:
        """The loaded config, or the one the last reload applied."""
        applied = self.manager.config if self.manager is not None else None
        return applied if applied is not None else self.config

    def register_workspace_tools(self, workspace: Path, commands: CommandPolicy) -> None:
        """Register ``read_file``, ``write_file``, ``list_directory`` and ``exec_shell`` with their bare names.

        They are confined to ``workspace``, kept off what configures toolsift (for the config in
        force, so a reload's new env and secret files are covered too), and ``exec_shell`` runs only
        ``commands``' programs, in a bubblewrap sandbox. ``toolsift serve`` lists them as
        ``builtin__read_file`` and so on; a skill's ``allowed-tools`` names them bare (``read_file``)
        on both sides, as patterns match a tool's canonical name.

        Raises:
            ConfigError: When ``workspace`` is not an existing directory.
        """
        self.registry.register_many(builtin_tools(Workspace(workspace, protected=self.protection), commands=commands))

    def skill_files(self, skill: Any) -> FolderFiles | None:
        """The files of a skill on disk, kept off what configures toolsift (a hard link to an env file included)."""
        return FolderFiles.of(skill, protected=self.protection)

    def unsearchable(self) -> set[str]:
        """The namespaces ``search_tools`` never finds; read on every search, so that a reload's servers count.

        Skills' own servers are among them: their tools are for their skill's turns only.
        """
        owned = self.skill_servers.namespaces() if self.skill_servers is not None else set()
        return owned | {server.namespace for server in self.servers() if not server.searchable}

    async def start_searchable_lazy(self) -> None:
        """Start the lazy servers a search may find, so that their tools are indexed."""
        if self.manager is not None:
            # A tool search is a need to know the tools of every lazy, searchable server.
            await self.manager.start_lazy(
                [server.namespace for server in self.manager.servers.values() if server.lazy and server.searchable]
            )

    def discovery(self, profile: AgentConfig, permissions: Permissions) -> Discovery:
        """A fresh tool-search state (pinned tools, unlocks) for one conversation or client of ``profile``."""
        return Discovery.for_agent(
            self.registry, profile, permissions=permissions, servers=self.servers, unsearchable=self.unsearchable
        )

    def warn_unmatched_globs(self, **options: Any) -> None:
        """Log the permission globs that match no tool (a denylist that protects nothing), once tools are listed.

        ``options`` go to :func:`~toolsift.config._internal.permission_glob_warnings`.
        """
        for warning in permission_glob_warnings(self.config, self.registry, **options)[0]:
            config_logger.warning("%s", warning)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Assembly]:
        """Trace calls (when configured), start the MCP sessions, offer ``search_tools`` and keep the index
        current, until exit.

        The index builds in a worker thread, now and after every registry change, so no search waits for it.
        On exit (or cancellation) every session is closed and child processes are reaped.
        """
        async with AsyncExitStack() as stack:
            stack.callback(trace_configured_calls(self.registry.audit, self.config))
            if self.manager is not None:
                await stack.enter_async_context(self.manager)
            if self.skill_servers is not None:
                await stack.enter_async_context(self.skill_servers.running())
            if self.index is not None:
                # search_tools sits in the internal tier: only a conversation's discovery pins it into its turns.
                self.registry.register(
                    SearchToolsTool(
                        self.index, auto_unlock=self.config.search.auto_unlock, prepare=self.start_searchable_lazy
                    ),
                    internal=True,
                )
                background = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(background.cancel_scope.cancel)
                await background.start(self.index.maintain)
            yield self

    async def watch(self, *, skills: bool = True, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Follow the config file's servers (when it came from a file) and, with ``skills``, the skill folders.

        Returns once cancelled; ``await tg.start(assembly.watch)`` returns once the watches are in place.
        """
        async with anyio.create_task_group() as watchers:
            if self.manager is not None and self.config.path is not None:
                await watchers.start(self.manager.watch, self.config.path)
            if skills:
                await watchers.start(self.skills.watch)
            task_status.started()
