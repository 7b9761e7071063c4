"""The MCP servers skills own: started when a skill is used, stopped once no conversation has used it for a while.

A skill's servers (its ``.mcp.json``, its plugin's servers; see
``toolsift.skills.owned_servers``) run in a session group of their own beside
the config's servers, with the same registry. They are internal and
unsearchable, so their tools surface only through an active skill's
``allowed-tools`` naming them literally; a conversation also hides them from
every skill that does not own them (:meth:`SkillServers.hidden_from`), so they
are visible only while their skill is active.

``/use`` takes a :class:`Lease` on the skill's servers: they start (in
parallel; ``/use`` waits, so that it can say when one cannot start and why)
and stay while a lease is held. When the last lease on a server is released
(``/unuse``, another skill, the skill gone), it keeps running for
``skills.serverIdleSeconds`` (300 by default) in case the skill comes back,
then stops; its tools leave the registry.

They follow the trust rule of the config that brought them: under a
project's consent (``trust`` given), each server is judged on every path its
start depends on (the file that declares it, ``${CLAUDE_PLUGIN_ROOT}``, its
folder, its relative paths: see ``_reach``). When all lie in the person's own
folders it starts; otherwise only once ``toolsift trust`` has recorded its
launch for its file, as a project's own servers do. Under a file the person
chose (``trust`` None) a skill starts what it says.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import final

import anyio
from anyio.abc import TaskGroup

from .._exceptions import SkillUnavailable
from ..config import ServerConfig, TrustedLaunches
from ..mcp_sessions import McpSession, McpSessionGroup, SessionOptions
from ..mcp_sessions._internal import SessionState
from ..registry import ToolRegistry
from ..skills import SkillSet
from ._launch import launch_problem
from ._ownership import OwnedServers, owned_servers
from ._plugin import Plugin
from ._reach import trust_refusal
from ._server_file import Declared

__all__ = ["Lease", "SkillServers"]

logger = logging.getLogger("toolsift.skills")

IdleWait = Callable[[float], Awaitable[object]]


@final
@dataclass(eq=False)
class Lease:
    """One conversation's hold on a skill's servers, from ``/use`` until :meth:`release`."""

    skill: str
    servers: tuple[str, ...]
    _host: SkillServers = field(repr=False)
    released: bool = False

    def release(self) -> None:
        """Let the servers go (they stop once idle for ``serverIdleSeconds``); a second call does nothing."""
        if not self.released:
            self.released = True
            self._host._let_go(self.servers)


@final
class SkillServers:
    """Runs the servers each skill owns, as the skill is used.

    Args:
        registry: Where their tools go (the config's registry).
        skills: The current skill snapshot, read at each need (a loader's ``skills``).
        plugins: The plugins some of the skills came with.
        configured: The config's servers in force, whose names a skill's servers may not take.
        config_path: The config file (named in a clash with one of its servers).
        options: Session settings (the config's); the trust rule is added to them.
        trust: A project config's consent; None when the person chose the file.
        user_folders: The person's own folders: skills and plugins there need no consent.
        idle_seconds: How long a server nobody uses keeps running.
        idle_wait: Waits that long (``anyio.sleep``; a test passes an event's wait).
    """

    def __init__(
        self,
        registry: ToolRegistry,
        skills: Callable[[], SkillSet],
        *,
        plugins: Sequence[Plugin] = (),
        configured: Callable[[], Iterable[ServerConfig]] = tuple,
        config_path: Path | None = None,
        options: SessionOptions | None = None,
        trust: TrustedLaunches | None = None,
        user_folders: Iterable[Path] = (),
        idle_seconds: float = 300.0,
        idle_wait: IdleWait = anyio.sleep,
    ) -> None:
        self._skills = skills
        self._plugins = tuple(plugins)
        self._configured = configured
        self._config_path = config_path
        self._trust = trust
        self._user_folders = tuple(user_folders)
        self._idle_seconds = idle_seconds
        self._idle_wait = idle_wait
        options = replace(options or SessionOptions(), launch_check=self.refusal)
        self.group = McpSessionGroup(registry, options=options)
        self._cache: tuple[SkillSet, tuple[ServerConfig, ...], dict[str, OwnedServers]] | None = None
        self._declared: dict[str, Declared] = {}
        self._leases: dict[str, int] = {}
        self._stops: dict[str, anyio.CancelScope] = {}
        self._failures: dict[str, tuple[ServerConfig, str]] = {}
        self._tasks: TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[SkillServers]:
        """Own the sessions until exit; on exit (or cancellation) every server is closed and reaped."""
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(self.group)
            tasks = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(tasks.cancel_scope.cancel)
            self._tasks = tasks
            try:
                yield self
            finally:
                self._tasks = None

    # -- what each skill owns -------------------------------------------------------------

    def owned(self) -> Mapping[str, OwnedServers]:
        """The servers of every skill that brings any (or whose server file is broken), by skill name."""
        snapshot = self._skills()
        configured = tuple(self._configured())
        cache = self._cache
        # Read again when the skills were reloaded or the config's servers changed (a reload).
        if cache is None or cache[0] is not snapshot or cache[1] != configured:
            where = f"the config file {self._config_path}" if self._config_path else "the config"
            taken = {name: where for server in configured for name in (server.name, server.namespace)}
            owned = owned_servers(snapshot, self._plugins, taken=taken)
            cache = self._cache = (snapshot, configured, owned)
            self._declared = {item.server.name: item for entry in owned.values() for item in entry.declared}
        return cache[2]

    def namespaces(self) -> set[str]:
        """The namespaces of every skill's servers (a tool search never finds them)."""
        return {ns for entry in self.owned().values() for ns in entry.namespaces}

    def problem(self, skill: str) -> str | None:
        """Why ``skill``'s servers cannot work (bad file, name clash, untrusted, failed last start), or None."""
        owned = self.owned().get(skill)
        if owned is None:
            return None
        if owned.problem is not None:
            return owned.problem
        for server in owned.servers:
            failure = self._failures.get(server.name)
            if failure is not None and failure[0] == server:
                return f"server {server.name!r} cannot start: {failure[1]}"
            problem = launch_problem(server)
            if problem is not None:
                return f"{problem} (it comes with {owned.sources[server.name]})"
            refusal = self.refusal(server)
            if refusal is not None:
                return refusal
        return None

    def hidden_from(self, skill: str | None) -> tuple[str, ...]:
        """Patterns of the skill-owned servers' tools that ``skill`` does not own (every one, without a skill)."""
        owned = self.owned()
        mine = set(owned[skill].namespaces) if skill is not None and skill in owned else set()
        others = {ns for entry in owned.values() for ns in entry.namespaces if ns not in mine}
        return tuple(f"{ns}__*" for ns in sorted(others))

    def refusal(self, server: ServerConfig) -> str | None:
        """Why ``server`` may not be launched under the trust rule, or None (it reads files).

        Asked before every start (``/use``, a restart), so a link changed since is judged where it leads now.
        """
        declared = self._declared.get(server.name)
        if self._trust is None or declared is None:
            return None
        declared = replace(declared, server=server)
        return trust_refusal(declared, self._trust.store, self._user_folders, cwd=Path.cwd())

    # -- using them -------------------------------------------------------------------------

    async def acquire(self, skill: str) -> Lease | None:
        """Start ``skill``'s servers (in parallel) and hold them; None when it owns none.

        If cancelled, the servers already started keep running until idle.

        Raises:
            SkillUnavailable: A server cannot start; the reason names it (and the others are let go).
        """
        owned = self.owned().get(skill)
        if owned is None:
            return None
        if owned.problem is not None:
            raise SkillUnavailable(skill, owned.problem)
        lease = Lease(skill, tuple(server.name for server in owned.servers), self)
        for name in lease.servers:
            self._leases[name] = self._leases.get(name, 0) + 1
            stop = self._stops.pop(name, None)
            if stop is not None:
                stop.cancel()
        try:
            sessions = {server.name: self._session(server) for server in owned.servers}
            async with anyio.create_task_group() as starting:
                for session in sessions.values():
                    starting.start_soon(session.wait_settled)
        except BaseException:
            lease.release()
            raise
        failed = [self._failed(session) for session in sessions.values() if session.state is not SessionState.READY]
        if failed:
            lease.release()
            raise SkillUnavailable(skill, "; ".join(failed))
        for name in sessions:
            self._failures.pop(name, None)
        return lease

    def _session(self, server: ServerConfig) -> McpSession:
        """The server's running session, or a new one when it has none or runs other settings."""
        session = self.group.get(server.name)
        if session is not None and session.config == server and session.state is not SessionState.ERROR:
            return session
        if session is not None:
            self.group.retire(server.name)
        logger.info("MCP server %r of a skill is needed now; starting it", server.name)
        started = self.group.spawn(server)
        assert started is not None  # a skill's servers are all enabled
        return started

    def _failed(self, session: McpSession) -> str:
        reason = session.reason or f"it ended in state {session.state.value}"
        self._failures[session.name] = (session.config, reason)
        self.group.retire(session.name)  # no retries in the background: the next /use tries again
        return f"server {session.name!r} cannot start: {reason}"

    def _let_go(self, servers: Iterable[str]) -> None:
        for name in servers:
            self._leases[name] -= 1
            if self._leases[name] == 0 and self._tasks is not None and name in self.group:
                scope = self._stops[name] = anyio.CancelScope()
                self._tasks.start_soon(self._stop_when_idle, name, scope, name=f"skill-server idle {name}")

    async def _stop_when_idle(self, name: str, scope: anyio.CancelScope) -> None:
        with scope:
            await self._idle_wait(self._idle_seconds)
            if self._stops.get(name) is scope:
                del self._stops[name]
                if name in self.group:
                    logger.info("MCP server %r of a skill is stopping: unused for %gs", name, self._idle_seconds)
                    self.group.retire(name)
