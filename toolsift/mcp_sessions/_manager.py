"""``McpServerManager``: every MCP session of a running agent, and hot reload of their config.

A new config is applied as a diff by server name (see ``ConfigDiff``):

- **added**: a session starts; its tools are registered once it is ready.
- **removed** (or disabled): the session drains. Its tools leave the registry
  at once, in the same step as the reload, so no turn built afterwards lists
  them; a call by name then fails with ``ToolNotFound`` whose message says the
  server is draining (removed at ...), and a call that reaches the session
  itself (through a tool object taken earlier) raises ``ServerDraining``. Calls
  already running may finish for up to ``drain_seconds``; when the last one
  ends, or the time runs out, the session closes and whatever still runs is
  cancelled (the server is told) and returns an error result saying why.
- **changed** (any setting differs): a new session starts *beside* the old
  one, which keeps serving until the new one has settled, then hands over in
  one step: the old session's tools leave the registry, the new session's
  come in, and the old session starts draining. No turn ever sees the server
  with no tools, nor with both sets. If the new session fails to start, the
  handover still happens (the file is the truth: the old settings are no
  longer wanted) and the server shows ``error`` with the reason. A lazy
  replacement hands over at once, since it does not connect until used. Calls
  in flight on the old session finish there: they hold its tool objects.
- **unchanged**: the same session, untouched, no reconnect.

A second edit that arrives while a replacement is still starting closes that
replacement (it never served) and starts over from the newest settings; an
edit back to the settings the old session runs just closes it.

A file that does not check out (unreadable, not JSON, any validation problem,
a ``${VAR}`` or ``secret://`` reference that does not resolve) is rejected as a
whole: subscribers get ``config.rejected`` with every problem and the config in
force stays, so a half-saved file or a typo in one server never takes a working
server away. Only ``tools.mcpServers`` reloads; the registry's rules, the
agents and the other sections are fixed at start.

Events (``ManagerEvent``) go to subscribers from the manager's own task, after
the registry reached its new state; see ``_manager_events``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, final

import anyio
from anyio.abc import TaskGroup, TaskStatus

from ._bootstrap import ServersLike
from ._bootstrap import _options as default_options
from ._bootstrap import _servers as server_list
from ._config import ServerConfig
from ._diff import ConfigDiff, diff_servers
from ._group import McpSessionGroup
from ._manager_events import EventBus, ManagerEvent
from ._options import SessionOptions
from ._session import McpSession
from ._session_table import ServerStatus, SessionTable, wait_draining
from ._toolsift_config import ToolsiftConfig
from ._watch import DEFAULT_DEBOUNCE_MS, read_config, watch_file

if TYPE_CHECKING:
    from ..registry import ToolRegistry

__all__ = ["McpServerManager"]

logger = logging.getLogger("toolsift.mcp_sessions")

# Sections a reload does not apply: the registry's rules and the agents are fixed at start.
_STATIC_SECTIONS = ("agents", "skills", "workspace", "audit")


@final
class McpServerManager(Mapping[str, McpSession]):
    """Owns every MCP session and applies config changes while calls keep running.

    It is a live, read-only mapping from server name to the session serving it
    (replacements still starting and old sessions draining are not in it; see
    :meth:`status`). Use it as an async context manager: entering starts the
    servers of ``config`` in parallel (a server that fails is left in state
    ``error`` and the rest go on), exiting closes every session (running calls
    are cancelled, child processes reaped).

    Example::

        async with McpServerManager(registry, load_config(path)) as manager:
            manager.subscribe(print)
            async with anyio.create_task_group() as tg:
                await tg.start(manager.watch, path)
                ...

    Args:
        registry: Where sessions register their tools.
        config: The servers to start on entry (a ``ToolsiftConfig``, servers by
            name, or a list); None starts with none.
        options: Settings of every session; by default the config's
            ``workspace`` (when the file sets one) is offered as MCP root.
        drain_seconds: How long a removed or replaced session may finish its
            calls (default ``options.drain_seconds``, 30).

    Raises:
        ValueError: ``drain_seconds`` is negative or not finite.
    """

    def __init__(self, registry: ToolRegistry, config: ServersLike | None = None, *,
                 options: SessionOptions | None = None, drain_seconds: float | None = None) -> None:
        self._registry = registry
        self._initial = config
        options = default_options(config, options) if config is not None else options or SessionOptions()
        seconds = options.drain_seconds if drain_seconds is None else drain_seconds
        if not (math.isfinite(seconds) and seconds >= 0):
            raise ValueError(f"drain_seconds must be a finite number of seconds >= 0, got {seconds!r}")
        self._bus = EventBus()
        self._table = SessionTable(registry, options, self._bus, float(seconds))
        self._config: ToolsiftConfig | None = None
        self._servers: dict[str, ServerConfig] = {}
        self._lock = anyio.Lock()
        self._group: TaskGroup | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._closed = False
        self._watching = False

    # -- the mapping and what it runs ------------------------------------------------

    def __getitem__(self, name: str) -> McpSession:
        return self._table.current[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.current)

    def __len__(self) -> int:
        return len(self._table.current)

    def __repr__(self) -> str:
        return f"McpServerManager({', '.join(f'{n}={s.state.value}' for n, s in self._table.current.items())})"

    @property
    def config(self) -> ToolsiftConfig | None:
        """The config file in force (None until one is applied, or when only servers were given)."""
        return self._config

    @property
    def servers(self) -> Mapping[str, ServerConfig]:
        """The server settings in force, by name (disabled ones included)."""
        return dict(self._servers)

    @property
    def skipped(self) -> Mapping[str, str]:
        """Servers that have no session, with the reason (disabled, nothing to connect to)."""
        return dict(self._table.skipped)

    @property
    def drain_seconds(self) -> float:
        """How long a removed or replaced session may finish its calls."""
        return self._table.drain_seconds

    @property
    def draining(self) -> tuple[McpSession, ...]:
        """Old sessions still finishing their calls."""
        return tuple(self._table.draining)

    def status(self) -> list[ServerStatus]:
        """One row per session (serving, starting beside it, or draining) with its calls in flight."""
        return self._table.status()

    def subscribe(self, callback: Callable[[ManagerEvent], object]) -> Callable[[], None]:
        """Call ``callback(event)`` for every :class:`ManagerEvent`; returns the unsubscriber.

        Callbacks run in the manager's event task, one event after another, and
        must not block; one that raises is logged and the others still run.
        Subscribe before entering to hear about the servers started on entry.
        """
        return self._bus.subscribe(callback)

    # -- lifecycle ---------------------------------------------------------------------

    async def __aenter__(self) -> McpServerManager:
        if self._group is not None:
            raise RuntimeError("McpServerManager is already entered")
        if self._closed:
            raise RuntimeError("Cannot reopen an McpServerManager once it has been closed; create a new one")
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = self._table.group = group
        try:
            await group.start(self._bus.run)
            self._unsubscribe = self._registry.subscribe(self._table.registry_changed)
            if self._initial is not None:
                await self.apply(self._initial)
        except BaseException as exc:
            await self._exit(type(exc))
            raise
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc_val: BaseException | None,
                        exc_tb: TracebackType | None) -> bool | None:
        await self._exit(exc_type)
        return None

    async def _exit(self, exc_type: type[BaseException] | None) -> None:
        group, self._group = self._group, None
        assert group is not None, "__aexit__ without __aenter__"
        self._closed = True
        try:
            if exc_type is None:
                async with anyio.create_task_group() as closers:
                    for session in self._table.sessions():
                        closers.start_soon(session.close)
                # Subscribers still hear what closing did (the tools that left the registry).
                self._bus.close()
                await self._bus.wait_finished()
        finally:
            if self._unsubscribe is not None:
                self._unsubscribe()
            self._table.forget_hints()
            self._bus.close()
            # On an error the owners are cancelled; the SDK still stops every server. The body's
            # own exception propagates as it is, not wrapped in an exception group.
            group.cancel_scope.cancel()
            await group.__aexit__(None, None, None)
            self._table.group = None

    def _check_running(self) -> None:
        if self._group is None:
            raise RuntimeError("McpServerManager is not running; use 'async with McpServerManager(...)'")

    def take_over(self, group: McpSessionGroup) -> None:
        """Adopt the sessions of ``group`` (from ``register_mcp_tools``) as the servers in force.

        The sessions keep their owner tasks in the group's task group, so the
        group must stay open until this manager has exited; from now on the
        manager drains and closes them. They must register in this manager's
        registry.

        Raises:
            ValueError: This manager already runs a server of the same name.
            RuntimeError: The manager is not entered.
        """
        self._check_running()
        clash = sorted(set(group) & (self._table.current.keys() | self._table.pending.keys()))
        if clash:
            raise ValueError(f"MCP server {clash[0]!r} already has a session in this manager")
        for name, session in group.items():
            self._table.adopt(session)
            self._servers[name] = session.config
        self._table.skipped.update(group.skipped)

    # -- applying configs ------------------------------------------------------------

    async def apply(self, config: ServersLike, *, wait: bool = True) -> ConfigDiff:
        """Make ``config``'s servers the ones in force; see the module docstring for the rules.

        Other sections of a ``ToolsiftConfig`` (agents, skills, workspace,
        audit, tool rules) are fixed at start; a change to them is logged as a
        warning. Draining continues in the background after this returns.
        Applies are serialised. If the caller is cancelled while waiting for
        new servers to settle, the config is already in force and the new
        sessions go on starting.

        Args:
            config: A ``ToolsiftConfig``, servers by name, or a list of servers.
            wait: Return only once every added or changed server has settled
                (ready or failed; lazy ones are not waited for) and handed over.

        Returns:
            What changed.

        Raises:
            RuntimeError: The manager is not entered.
        """
        self._check_running()
        servers = {server.name: server for server in server_list(config)}
        draining_before = set(self._table.draining)
        async with self._lock:
            diff = diff_servers(self._servers, servers)
            if isinstance(config, ToolsiftConfig):
                self._note_static_changes(config)
                self._config = config
            self._servers = servers
            abandoned = [p for name in (*diff.removed, *diff.changed) if (p := self._table.pending.pop(name, None))]
            for name in diff.removed:
                self._table.remove(name)
            for name in diff.changed:
                self._table.change(servers[name])
            for name in diff.added:
                self._table.add(servers[name])
            if abandoned:
                # Replacements that never served: nothing to drain.
                async with anyio.create_task_group() as closers:
                    for session in abandoned:
                        closers.start_soon(session.close)
        if diff:
            logger.info("MCP servers: %s", diff)
        # A removed server refuses new calls before this returns, not one scheduling round later.
        for session in self._table.draining - draining_before:
            await wait_draining(session)
        if wait:
            async with anyio.create_task_group() as waiters:
                for name in (*diff.added, *diff.changed):
                    started = self._table.pending.get(name) or self._table.current.get(name)
                    if started is not None and not started.config.lazy:
                        waiters.start_soon(started.wait_settled)
        return diff

    async def reload(self, path: str | Path | None = None, *, wait: bool = True) -> ConfigDiff | None:
        """Read a config file and apply it; an invalid one is reported and changes nothing.

        Invalid means: unreadable, not JSON, any validation problem (even in one
        server: applying the rest would drop that server), or a ``${VAR}`` /
        ``secret://`` reference that does not resolve. Subscribers then get
        ``config.rejected`` with every problem, and the config in force stays.

        The file is read and checked in a worker thread. Cancellation behaves
        as for :meth:`apply`.

        Args:
            path: The file; by default the one the config in force came from.
            wait: As for :meth:`apply`.

        Returns:
            What changed, or None when the file was rejected.

        Raises:
            ValueError: No path was given and the config in force has none.
            RuntimeError: The manager is not entered.
        """
        file = Path(path) if path is not None else self._config.path if self._config is not None else None
        if file is None:
            raise ValueError("No config file to reload: pass a path (the config in force was not loaded from a file)")
        report = await read_config(file.absolute())
        if report.config is None or report.problems:
            error = report.error()
            self._bus.emit(ManagerEvent("config.rejected", reason=f"{error}; the running config stays in force",
                                        error=error))
            return None
        return await self.apply(report.config, wait=wait)

    async def watch(self, path: str | Path | None = None, *, debounce_ms: int = DEFAULT_DEBOUNCE_MS,
                    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Follow the config file with watchfiles and :meth:`reload` each edit, until cancelled.

        Run it in a task group: ``await tg.start(manager.watch, path)`` returns
        once the watch is in place and the file has been checked once (an edit
        made before that is applied). Bursts of file events within
        ``debounce_ms`` are applied once. Edits are applied without waiting for
        new servers to connect, so a slow server never delays the next edit.

        Raises:
            ValueError: No path was given and the config in force has none, or
                ``debounce_ms`` is negative.
            RuntimeError: This manager is already watching, or is not entered.
            ConfigError: The file's folder does not exist.
        """
        self._check_running()
        if debounce_ms < 0:
            raise ValueError(f"debounce_ms must be >= 0, got {debounce_ms!r}")
        file = Path(path) if path is not None else self._config.path if self._config is not None else None
        if file is None:
            raise ValueError("No config file to watch: pass a path (the config in force was not loaded from a file)")
        if self._watching:
            raise RuntimeError("This McpServerManager is already watching a config file")
        self._watching = True
        try:
            await watch_file(file, lambda: self.reload(file, wait=False), debounce_ms=debounce_ms,
                             task_status=task_status)
        finally:
            self._watching = False

    def _note_static_changes(self, config: ToolsiftConfig) -> None:
        old = self._config
        if old is None:
            return
        changed = [name for name in _STATIC_SECTIONS if getattr(old, name) != getattr(config, name)]
        if old.tools.permissions != config.tools.permissions:
            changed.append("tools.permissions")
        if changed:
            logger.warning("Config %s: changes to %s take effect at the next start; a reload applies "
                           "tools.mcpServers only", config.path or "(no file)", ", ".join(changed))
