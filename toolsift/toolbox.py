"""The facade: one config file -> registry + sessions + skills + manager + conversations."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar, final

import anyio
from anyio.abc import TaskStatus

from ._assembly import Assembly
from ._folders import find_config
from ._skill_files import SkillFiles
from .agent import Conversation
from .builtins._internal import SkillFileTool
from .config import SkillGrants, ToolsiftConfig, TrustedLaunches, validate_config
from .mcp_sessions import ClientCallbacks
from .mcp_sessions._internal import ListMcpResources, ReadMcpResource, resource_context, server_instructions
from .mcp_sessions.reload import McpServerManager
from .registry import Approver, CallHandler
from .search import SearchIndex, SkillCatalog
from .search._internal import BackendName, McpServedSkill, ServedSkills

__all__ = ["Toolbox"]

T = TypeVar("T")


@final
class Toolbox:
    """Everything a config file describes, started and stopped together.

    Example::

        async with Toolbox.from_config("toolsift.json") as box:
            chat = box.conversation()
            await chat.handle_command("/use code-assist Refactor the auth module")
            turn = chat.turn("openai")   # instructions + the turn's schemas

    On entry it builds the registry (with the config's tool rules and audit
    log, and the workspace tools when ``tools.builtins`` enables them), loads
    the skills, and starts every enabled MCP server in parallel through
    :attr:`manager`; a server that fails is reported in
    :attr:`sessions` and the rest go on. On exit every session is closed and
    child processes are reaped. If the entering task is cancelled, whatever was
    started is closed again.

    With ``watch=True`` (or by running :meth:`watch`), edits to the config
    file's ``tools.mcpServers`` and to the skill folders apply while it runs;
    see :class:`~toolsift.mcp_sessions.McpServerManager` for how servers are
    added, drained and replaced. Other sections of the file take effect at the
    next start.

    Args:
        config: A loaded config.
        user_skills_dir: The user's skill folder (``~/.toolsift/skills`` by
            default; used only when the config's ``skills.userSkills`` is true).
        watch: Follow the config file and the skill folders from entry to exit.
        drain_seconds: How long a removed or replaced server may finish its
            calls when neither the server nor the file's top level sets
            ``drainSeconds`` (default 30).
        search_backend: Tool search's ranking, instead of the config's ``search.backend``.
        callbacks: How servers' requests are answered: sampling (``model_sampler``
            asks the agent's model), elicitation (ask the person), log messages.
            By default sampling and elicitation are refused.
        trust: What an edit of a project's config may launch while watched
            (see :class:`~toolsift.config.TrustedLaunches`); None starts
            whatever the file says, for a file the caller chose.

    Attributes:
        dropped: Servers of the config file left out for a problem in their
            entry, with why (filled by :meth:`from_config`; the others start).
        parts: What the config describes, built in one place (the same
            assembly a ``ToolsiftServer`` is built with): ``registry``,
            ``skills`` and ``manager`` are its parts.
        served_skills: The skills connected servers offer through the MCP
            Skills extension (``/use <server>/<skill>``), taken at start and again
            when a server (re)connects or a reload replaces it; call
            ``await box.served_skills.refresh(box.sessions)`` to take them again
            (after ``served_skills.grants.approve(...)``, say).
    """

    def __init__(
        self,
        config: ToolsiftConfig,
        *,
        user_skills_dir: Path | None = None,
        watch: bool = False,
        drain_seconds: float | None = None,
        search_backend: BackendName | None = None,
        callbacks: ClientCallbacks | None = None,
        trust: TrustedLaunches | None = None,
    ) -> None:
        self.config = config
        self.search_backend: BackendName = search_backend or config.search.backend
        self.dropped: Mapping[str, str] = {}
        self.parts = Assembly(
            config,
            user_skills_dir=user_skills_dir,
            callbacks=callbacks,
            drain_seconds=drain_seconds,
            trust=trust,
            search_backend=self.search_backend,
            builtins=True,
        )
        self.registry = self.parts.registry
        self.skills = self.parts.skills
        # Skills connected servers offer (MCP Skills extension), taken at start; their allowed-tools
        # apply once the user approved them (skill-grants.json in the user folder).
        self.served_skills = ServedSkills(SkillGrants())
        self.manager = self.parts.sessions
        self._watch = watch
        self._watching = False
        self._running = False  # set once entered, and kept: what ran stays readable after exit
        self._stack: AsyncExitStack | None = None

    @classmethod
    def from_config(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        user_skills_dir: Path | None = None,
        watch: bool = False,
        drain_seconds: float | None = None,
        search_backend: BackendName | None = None,
        callbacks: ClientCallbacks | None = None,
    ) -> Toolbox:
        """Load a config file (see :func:`find_config`) into a toolbox that is not started yet.

        Raises:
            ConfigError: When no file is found or the file is invalid.
        """
        report = validate_config(find_config(path))
        box = cls(
            report.usable(),
            user_skills_dir=user_skills_dir,
            watch=watch,
            drain_seconds=drain_seconds,
            search_backend=search_backend,
            callbacks=callbacks,
        )
        box.dropped = report.dropped
        return box

    @property
    def sessions(self) -> McpServerManager:
        """Every MCP session by server name (internal servers included): :attr:`manager` once started.

        Raises:
            RuntimeError: Before the toolbox is entered.
        """
        return self._started(self.manager)

    @property
    def catalog(self) -> SkillCatalog:
        """Every skill ``/use`` can activate: SKILL.md skills, then the servers' prompts."""
        return self._started(self.parts.catalog)

    @property
    def index(self) -> SearchIndex:
        """The search index over every tool and skill (what ``search_tools`` ranks with)."""
        return self._started(self.parts.index)

    def _started(self, part: T | None) -> T:
        if part is None or not self._running:
            raise RuntimeError("Toolbox is not started: use 'async with Toolbox.from_config(...) as box'")
        return part

    async def __aenter__(self) -> Self:
        if self._stack is not None:
            raise RuntimeError("Cannot enter a Toolbox twice")
        stack = AsyncExitStack()
        async with AsyncExitStack() as guard:
            guard.push_async_exit(stack)
            await self.skills.aload()
            await stack.enter_async_context(self.parts.running())
            self._running = True
            self.registry.register_many([ListMcpResources(self.manager), ReadMcpResource(self.manager)])
            # Pinned to a turn only while a skill with bundled files is active (see Conversation).
            self.registry.register(SkillFileTool(self.parts.catalog.get, self._skill_files), internal=True)
            self.parts.catalog.served = self.served_skills
            # Listening first: a server that reconnects while the skills are first taken is taken again.
            followers = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(followers.cancel_scope.cancel)
            await followers.start(self.served_skills.follow, self.manager)
            await self.served_skills.refresh(self.manager)
            self.parts.warn_unmatched_globs(app_tools=True)
            if self._watch:
                watchers = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(watchers.cancel_scope.cancel)
                await watchers.start(self.watch)
            guard.pop_all()
        self._stack = stack
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    async def watch(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Follow the config file and the skill folders, applying each edit, until cancelled.

        Run it in a task group of the started toolbox: ``await
        tg.start(box.watch)`` returns once both watches are in place. Server
        edits reach :meth:`McpServerManager.subscribe` subscribers as
        ``ManagerEvent`` objects (``config.rejected`` for an invalid file, which
        changes nothing); skill edits reach ``box.skills.subscribe`` subscribers
        as ``SkillsReloaded``. Either is the signal to refresh a schema set.

        Raises:
            RuntimeError: Before the toolbox is entered, or when it is already watching.
            ValueError: The config was not loaded from a file.
        """
        self._started(self.manager)
        if self.config.path is None:
            raise ValueError("This toolbox's config was not loaded from a file; there is nothing to watch")
        if self._watching:
            raise RuntimeError("This Toolbox is already watching its config file and skill folders")
        self._watching = True
        try:
            await self.parts.watch(task_status=task_status)
        finally:
            self._watching = False

    def conversation(
        self,
        agent: str | None = None,
        *,
        instructions: str = "",
        call_handler: CallHandler | None = None,
        approver: Approver | None = None,
    ) -> Conversation:
        """A conversation under the agent profile ``agent`` (the default profile if None).

        Pinned (``alwaysLoad``) servers and the resources of ``resources: true``
        servers follow the servers in force, so a reload reaches conversations
        that began before it. ``approver`` answers the calls the profile's
        ``ask`` / ``askDestructive`` rules hold back; without one they are refused.
        ``/use`` of a skill whose allowed-tools name a lazy server starts it, and starts the
        servers the skill owns (its ``.mcp.json``, its plugin's), refusing with the reason when one cannot.
        ``instructions`` (the base system prompt) default to the profile's ``instructions``.

        Raises:
            ConfigError: When the config has no such agent.
        """
        profile = self.config.agent(agent)
        permissions = replace(profile.permissions.to_permissions(), approver=approver)
        manager = sessions = self.sessions
        discovery = self.parts.discovery(profile, permissions)

        async def resources() -> str:
            # Empty (and nothing read) while no server in force asks for its resources in context.
            return await resource_context(sessions)

        return Conversation.for_agent(
            self.registry,
            self.catalog,
            profile,
            instructions=instructions or profile.instructions,
            call_handler=call_handler,
            discovery=discovery,
            context=resources,
            permissions=permissions,
            start_servers=manager.start_lazy,
            server_instructions=lambda nonce: server_instructions(sessions, nonce=nonce),
            skill_servers=self.parts.skill_servers,
            skill_files=self._skill_files,
        )

    def agents(self) -> Sequence[str]:
        """The agent profiles the config defines."""
        return sorted(self.config.agents)

    def _skill_files(self, skill: Any) -> SkillFiles | None:
        """The files of any skill ``/use`` activates: a served skill's from its server, a local one's from disk."""
        return skill.files if isinstance(skill, McpServedSkill) else self.parts.skill_files(skill)
