"""``McpServerManager``: hot reload of the MCP servers one session group runs.

The manager is a :class:`McpSessionGroup` (the one owner of its sessions,
one record per server) that also decides what to apply: the group's methods
carry it out (the handover is described there, the drain in ``_draining``).
A new config is applied as a diff by server name (see ``ConfigDiff``):

- **added**: a session starts; its tools are registered once it is ready.
- **removed** (or disabled): the session drains. Its tools leave the registry
  at once, in the same step as the reload, so no turn built afterwards lists
  them; a call by name then fails with ``ToolNotFound`` whose message says the
  server is draining (removed at ...), and a call that reaches the session
  itself (through a tool object taken earlier) raises ``ServerDraining``. Calls
  already running may finish for up to ``drainSeconds``; when the last one
  ends, or the time runs out, the session closes and whatever still runs is
  cancelled (the server is told) and returns an error result saying why.
- **changed** (any setting differs): a new session starts *beside* the old
  one, which keeps serving until the new one has settled, then hands over in
  one step: one registry change swaps the old tools for the new, and the old
  session starts draining. No turn ever sees the server with no tools, nor
  with both sets. If the new session fails to start, the handover still
  happens (the file is the truth: the old settings are no longer wanted) and
  the server shows ``error`` with the reason. A lazy replacement hands over at
  once, since it does not connect until used. Calls in flight on the old
  session finish there: they hold its tool objects.
- **unchanged**: the same session, untouched, no reconnect.

A second edit that arrives while a replacement is still starting closes that
replacement in the background (it never served) and starts over from the
newest settings; an edit back to the settings the old session runs just
closes it.

How long a draining session may finish its calls: the server's own
``drainSeconds``, else the file's top-level ``drainSeconds``, else the
``drain_seconds`` given here (30 by default): the most specific setting wins.

One rule for bad entries, at start and at every reload: a server whose entry
has a problem (a bad value, an unknown key, a ``${VAR}`` or ``secret://``
reference that does not resolve) never changes what that server runs. A
lenient load at start leaves it out; a reload reports it as
``server.rejected`` (naming the field), keeps that server's previous
settings (or leaves it out, if it had none) and applies the rest. A file that
cannot be used at all (unreadable, not JSON, a problem outside the servers)
is rejected whole with ``config.rejected`` and the config in force stays.
Only the servers and the top-level ``drainSeconds`` reload; the registry's
rules, the agents and the other sections are fixed at start.

Given ``trust`` (a ``TrustedLaunches``: the file came with a project), the
manager starts a server, on entry or because an edit added it or changed
what it launches, only when that trust covers the launch. One it does not
cover is reported as ``server.untrusted`` (saying how to trust it) and
treated as a bad entry: it keeps its previous settings, or is not started,
and the rest applies. A server whose entry did not change keeps running.

Reads and applies are serialised: a reload reads its file under the same
lock an apply holds, so edits apply in the order they were read and an older
read never overwrites a newer one.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, final

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup, TaskStatus

from ..._exceptions import ConfigError
from ...config import ServerConfig, ToolsiftConfig, TrustedLaunches
from ...config._internal import ConfigReport
from .._bootstrap import ServersLike, default_session_options
from .._bootstrap import _servers as server_list
from .._events import ManagerEvent, ManagerEventKind
from .._group import McpSessionGroup, settled
from .._options import SessionOptions
from .._session import McpSession
from ._diff import ConfigDiff, diff_servers
from ._watch import DEFAULT_DEBOUNCE_MS, read_config, watch_file

if TYPE_CHECKING:
    from ...registry import ToolRegistry

__all__ = ["McpServerManager"]

logger = logging.getLogger("toolsift.mcp_sessions")

# Sections a reload does not apply: the registry's rules and the agents are fixed at start.
_STATIC_SECTIONS = ("agents", "skills", "workspace", "audit")


@final
class McpServerManager(McpSessionGroup):
    """Runs the MCP servers of a config and applies config changes while calls keep running.

    A session group (a live, read-only mapping from server name to the
    session serving it, with :meth:`status`, :meth:`subscribe` and the rest)
    whose servers come from a config. Use it as an async context manager: entering starts the
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
            calls when neither its server nor the file's top level sets
            ``drainSeconds`` (default ``options.drain_seconds``, 30).
        trust: What a project's config may launch, on entry and at each
            reload; None starts whatever the file says (a file the caller chose).

    Raises:
        ValueError: ``drain_seconds`` is negative or not finite.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        config: ServersLike | None = None,
        *,
        options: SessionOptions | None = None,
        drain_seconds: float | None = None,
        trust: TrustedLaunches | None = None,
    ) -> None:
        self._initial = config
        self._trust = trust
        options = default_session_options(config, options) if config is not None else options or SessionOptions()
        if trust is not None:
            options = replace(options, launch_check=trust.refusal)
        super().__init__(registry, options=options, drain_seconds=drain_seconds)
        self._default_drain = self.drain_seconds
        self._config: ToolsiftConfig | None = None
        self._servers: dict[str, ServerConfig] = {}
        self._lock = anyio.Lock()
        self._watching = False

    # -- what it runs ------------------------------------------------------------------

    @property
    def config(self) -> ToolsiftConfig | None:
        """The config file in force (None until one is applied, or when only servers were given)."""
        return self._config

    @property
    def servers(self) -> Mapping[str, ServerConfig]:
        """The server settings in force, by name (disabled ones included)."""
        return dict(self._servers)

    # -- lifecycle ---------------------------------------------------------------------

    async def _opened(self, tasks: TaskGroup) -> None:
        # Entering applies the initial config; if that fails, the group closes again and the error propagates.
        await super()._opened(tasks)
        initial = self._initial
        if isinstance(initial, ToolsiftConfig):
            initial = await self._within_trust(initial)
        if initial is not None:
            await self.apply(initial)

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
        self._running()
        async with self._lock:
            diff, started = self._apply(config)
        return await self._settle(diff, started, wait=wait)

    async def reload(self, path: str | Path | None = None, *, wait: bool = True) -> ConfigDiff | None:
        """Read a config file and apply it; see the module docstring for what a bad entry does.

        The file is read and checked in a worker thread, under the apply lock,
        so concurrent reloads apply in the order they read. References
        (``${VAR}``, ``secret://``) are resolved as part of the check. A file
        that cannot be used at all gives ``config.rejected``; a server entry
        with problems gives ``server.rejected`` and keeps that server as it
        runs. Cancellation behaves as for :meth:`apply`.

        Args:
            path: The file; by default the one the config in force came from.
            wait: As for :meth:`apply`.

        Returns:
            What changed, or None when the file was rejected as a whole.

        Raises:
            ValueError: No path was given and the config in force has none.
            RuntimeError: The manager is not entered.
        """
        file = self._file(path, "reload")
        self._running()
        async with self._lock:
            config = self._admit(await read_config(file.absolute()))
            if config is None:
                return None
            diff, started = self._apply(await self._within_trust(config))
        return await self._settle(diff, started, wait=wait)

    async def watch(
        self,
        path: str | Path | None = None,
        *,
        debounce_ms: int = DEFAULT_DEBOUNCE_MS,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Follow the config file with watchfiles and :meth:`reload` each edit, until cancelled.

        Run it in a task group: ``await tg.start(manager.watch, path)`` returns
        once the watch is in place and the file has been checked once (an edit
        made before that is applied). Bursts of file events within
        ``debounce_ms`` are applied once. Edits are applied without waiting for
        new servers to connect, so a slow server never delays the next edit. A
        symlinked file is followed to its target, and the link itself is
        watched too (a dotfile manager re-pointing it is an edit).

        Raises:
            ValueError: No path was given and the config in force has none, or
                ``debounce_ms`` is negative.
            RuntimeError: This manager is already watching, or is not entered.
            ConfigError: The file's folder does not exist.
        """
        self._running()
        if debounce_ms < 0:
            raise ValueError(f"debounce_ms must be >= 0, got {debounce_ms!r}")
        file = self._file(path, "watch")
        if self._watching:
            raise RuntimeError("This McpServerManager is already watching a config file")
        self._watching = True
        try:
            await watch_file(
                file, lambda: self.reload(file, wait=False), debounce_ms=debounce_ms, task_status=task_status
            )
        finally:
            self._watching = False

    # -- what to apply -----------------------------------------------------------------

    def _file(self, path: str | Path | None, verb: str) -> Path:
        file = Path(path) if path is not None else self._config.path if self._config is not None else None
        if file is None:
            raise ValueError(f"No config file to {verb}: pass a path (the config in force was not loaded from a file)")
        return file

    def _admit(self, report: ConfigReport) -> ToolsiftConfig | None:
        """The config a reload applies: the file's, each rejected server kept as it runs; None if unusable."""
        if report.config is None:
            error = report.error()
            self.report(
                ManagerEvent("config.rejected", reason=f"{error}; the running config stays in force", error=error)
            )
            return None
        servers = dict(report.config.servers)
        for name in report.skipped:
            error = ConfigError(
                report.dropped.get(name, f"the entry of server {name!r} has problems"), path=report.path
            )
            self._hold_back(servers, name, "server.rejected", error)
        return _with_servers(report.config, servers)

    async def _within_trust(self, config: ToolsiftConfig) -> ToolsiftConfig:
        """``config`` with each launch the trust does not cover held back, unless its entry is unchanged."""
        if self._trust is None:
            return config
        check = await anyio.to_thread.run_sync(self._trust.check, config)  # it reads files
        servers = dict(config.servers)
        for name in (*check.new, *check.changed):
            if servers[name] != self._servers.get(name):  # an unchanged entry runs what it ran
                self._hold_back(servers, name, "server.untrusted", ConfigError(check.refusal(name), path=config.path))
        return _with_servers(config, servers)

    def _hold_back(
        self, servers: dict[str, ServerConfig], name: str, kind: ManagerEventKind, error: ConfigError
    ) -> None:
        """Keep server ``name`` in ``servers`` as it runs (or leave it out, if it does not run); report why."""
        previous = self._servers.get(name)
        if previous is not None:
            servers[name] = previous
        else:
            servers.pop(name, None)
        outcome = "it keeps its previous settings" if previous is not None else "it is not started"
        self.report(ManagerEvent(kind, name, reason=f"{error}; {outcome}", error=error))

    def _apply(self, config: ServersLike) -> tuple[ConfigDiff, list[McpSession]]:
        """Apply the diff in one step (a removed server refuses calls at once); return it and the sessions started."""
        servers = {server.name: server for server in server_list(config)}
        diff = diff_servers(self._servers, servers)
        if isinstance(config, ToolsiftConfig):
            self._note_static_changes(config)
            self._config = config
            self.drain_seconds = self._default_drain if config.drain_seconds is None else config.drain_seconds
        self._servers = servers
        for name in diff.removed:
            self.retire(name)
        started = [self.replace(servers[name]) for name in diff.changed]
        started += [self.spawn(servers[name]) for name in diff.added]
        return diff, [s for s in started if s is not None]

    async def _settle(self, diff: ConfigDiff, started: list[McpSession], *, wait: bool) -> ConfigDiff:
        if diff:
            logger.info("MCP servers: %s", diff)
        if wait:
            await settled(started)
        return diff

    def _note_static_changes(self, config: ToolsiftConfig) -> None:
        old = self._config
        if old is None:
            return
        changed = [name for name in _STATIC_SECTIONS if getattr(old, name) != getattr(config, name)]
        if old.tools.permissions != config.tools.permissions:
            changed.append("tools.permissions")
        if changed:
            logger.warning(
                "Config %s: changes to %s take effect at the next start; a reload applies "
                "tools.mcpServers and drainSeconds only",
                config.path or "(no file)",
                ", ".join(changed),
            )


def _with_servers(config: ToolsiftConfig, servers: Mapping[str, ServerConfig]) -> ToolsiftConfig:
    tools = config.tools.model_copy(update={"mcp_servers": dict(servers)})
    return config.model_copy(update={"tools": tools})
