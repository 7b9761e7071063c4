"""``McpSessionGroup``: the one owner of a set of MCP sessions, by server name.

Each server has at most one *serving* session, the mapping's value. A
replacement may be *starting* beside it, and old sessions *drain*: they take
no new calls, may finish the ones in flight for ``drainSeconds``, then close.
Every session's owner task runs in the group's task group, guarded so that
one session's failure never cancels the others.

With a registry, the group decides whose tools a namespace holds: the serving
session's, registered once it is ready and swapped whenever its server changes
them. A replacement takes over in one synchronous step once it has settled:
its tools replace the old session's in one ``replace_server`` call, so neither
a turn nor a registry subscriber ever sees the server with no tools, nor with
both sets, and the old session starts draining. A replacement that failed to
start takes over too (the old settings are no longer wanted): the old tools
just leave. A lazy replacement takes over at once, as it connects only when used.

A retired session's tools leave the registry in the step that retires it, and
the registry explains the absence (``server X is draining``) until it closes.
Subscribers hear of all of it as ``ManagerEvent`` objects (see ``_events``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import suppress
from datetime import UTC, datetime
from typing import TYPE_CHECKING, final

import anyio
from anyio.abc import TaskGroup

from .._exceptions import ServerDraining, ServerUnavailable
from ..config import ServerConfig
from ._draining import drain_outcome
from ._events import EventBus, ManagerEvent, ManagerEventKind, ToolChanges
from ._options import SessionOptions
from ._publisher import ToolPublisher
from ._resource import TaskGroupResource
from ._session import McpSession
from ._state import SessionEvent, SessionState
from ._status import ROLE_ORDER, Role, ServerStatus

if TYPE_CHECKING:
    from ..registry import Tool, ToolRegistry

__all__ = ["McpSessionGroup"]

logger = logging.getLogger("toolsift.mcp_sessions")


@final
class McpSessionGroup(TaskGroupResource, Mapping[str, McpSession]):
    """Runs many sessions side by side; leaving ``async with`` closes them all.

    It is a live, read-only mapping from server name to the session serving it
    (replacements still starting and old sessions draining are not in it; see
    :meth:`status`). Leaving the block closes every session: calls still
    running are cancelled (each returns an error result) and child processes
    are reaped.

    Args:
        registry: Where the sessions' tools go (None: the sessions keep them).
        options: Settings shared by every session of the group.
        drain_seconds: How long a retired or replaced session may finish its
            calls when its server sets no ``drainSeconds`` (default
            ``options.drain_seconds``, 30).

    Raises:
        ValueError: ``drain_seconds`` is negative or not finite.
    """

    def __init__(self, registry: ToolRegistry | None = None, *, options: SessionOptions | None = None,
                 drain_seconds: float | None = None) -> None:
        super().__init__()
        self._registry = registry
        self._options = options if options is not None else SessionOptions()
        self.drain_seconds = self._options.drain_seconds if drain_seconds is None else drain_seconds
        self._serving: dict[str, McpSession] = {}
        self._starting: dict[str, McpSession] = {}
        self._draining: set[McpSession] = set()
        self._abandoned: set[McpSession] = set()  # replacements that never served, closing in the background
        self._skipped: dict[str, str] = {}
        self._announce: dict[McpSession, ManagerEventKind] = {}
        self._published: dict[McpSession, tuple[Tool, ...]] = {}
        self._problems: dict[McpSession, str] = {}  # why a ready session's tools could not be registered
        self._absent: dict[str, str] = {}  # namespace -> the "draining" hint the registry gives for it
        self._bus = EventBus()
        self._changes = ToolChanges(registry, self._bus) if registry is not None else None
        self._unsubscribe: Callable[[], None] | None = None

    # -- the mapping and what it runs -------------------------------------------------------

    def __getitem__(self, name: str) -> McpSession:
        return self._serving[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._serving)

    def __len__(self) -> int:
        return len(self._serving)

    def __repr__(self) -> str:
        return f"McpSessionGroup({', '.join(f'{n}={s.state.value}' for n, s in self._serving.items())})"

    @property
    def drain_seconds(self) -> float:
        """How long a retired or replaced session may finish its calls, unless its server says otherwise."""
        return self._drain_seconds

    @drain_seconds.setter
    def drain_seconds(self, seconds: float) -> None:
        if not (math.isfinite(seconds) and seconds >= 0):
            raise ValueError(f"drain_seconds must be a finite number of seconds >= 0, got {seconds!r}")
        self._drain_seconds = float(seconds)

    @property
    def skipped(self) -> Mapping[str, str]:
        """Servers that got no session, with the reason (disabled, nothing to connect to)."""
        return dict(self._skipped)

    @property
    def starting(self) -> Mapping[str, McpSession]:
        """Replacements starting beside their server's session, by server name."""
        return dict(self._starting)

    @property
    def draining(self) -> tuple[McpSession, ...]:
        """Old sessions still finishing their calls."""
        return tuple(self._draining)

    def status(self) -> list[ServerStatus]:
        """One row per session (serving, starting beside it, draining), by server name, then role."""
        rows = [self._row(s, "serving") for s in self._serving.values()]
        rows += [self._row(s, "starting") for s in self._starting.values()]
        rows += [self._row(s, "draining") for s in self._draining]
        return sorted(rows, key=lambda row: (row.server, ROLE_ORDER[row.role]))

    def subscribe(self, callback: Callable[[ManagerEvent], object]) -> Callable[[], None]:
        """Call ``callback(event)`` for every :class:`ManagerEvent`; returns the unsubscriber.

        Callbacks run in the group's event task, one event after another, and
        must not block; one that raises is logged and the others still run.
        Subscribe before entering to hear about the servers started first.
        """
        return self._bus.subscribe(callback)

    def report(self, event: ManagerEvent) -> None:
        """Queue ``event`` for subscribers, after every event queued before it (a rejected config, say)."""
        self._bus.emit(event)

    # -- starting, replacing, retiring --------------------------------------------------------

    def spawn(self, config: ServerConfig) -> McpSession | None:
        """Start a session for a server that has none, without waiting for it.

        Returns None (and records why in :attr:`skipped`) for a disabled server
        or one with nothing to connect to.

        Raises:
            ValueError: That server already has a session in this group.
            RuntimeError: The group is not entered.
        """
        self._running()
        if config.name in self._serving:
            raise ValueError(f"MCP server {config.name!r} already has a session in this group")
        reason = _skip_reason(config)
        if reason is not None:
            self._skipped[config.name] = reason
            logger.info("MCP server %r is not started: %s", config.name, reason)
            return None
        self._skipped.pop(config.name, None)
        session = self._start(config, "server.added")
        self._serve(session)
        return session

    async def start_all(self, servers: Iterable[ServerConfig]) -> dict[str, McpSession]:
        """Start every server in parallel; wait until each non-lazy one is ready or failed.

        A server that fails to start ends in state ``error``; the rest go on.
        Returns the new sessions by name.
        """
        started = [s for s in (self.spawn(config) for config in servers) if s is not None]
        async with anyio.create_task_group() as waiters:
            for session in started:
                if not session.config.lazy:
                    waiters.start_soon(session.wait_settled)
        return {s.name: s for s in started}

    async def start_lazy(self, namespaces: Iterable[str]) -> list[str]:
        """Start the lazy servers, not started yet, whose tools are named ``<namespace>__*``; wait for each.

        A server that fails to start ends in state ``error`` (its status row
        says why); the others go on. Returns the names of the servers started.
        """
        wanted = set(namespaces)
        idle = [session for session in self._serving.values()
                if session.config.lazy and session.state is SessionState.IDLE and session.config.namespace in wanted]
        async with anyio.create_task_group() as starting:
            for session in idle:
                logger.info("MCP server %r (lazy) is needed now; starting it", session.name)
                starting.start_soon(_start_lazily, session)
        return [session.name for session in idle]

    async def add(self, config: ServerConfig) -> McpSession | None:
        """Start one server and wait until it is ready or failed (lazy ones are not waited for)."""
        session = self.spawn(config)
        if session is not None and not config.lazy:
            await session.wait_settled()
        return session

    def replace(self, config: ServerConfig) -> McpSession | None:
        """Start a session with new settings beside the server's session; it takes over once settled.

        See the module docstring for the handover. A replacement still starting
        from an earlier call is closed in the background (it never served), so
        the newest settings win; settings equal to the serving session's just
        close it. A server without a session is spawned; a disabled one (or one
        with nothing to connect to) is retired.

        Returns:
            The session that serves (or will serve) the server, or None.

        Raises:
            RuntimeError: The group is not entered.
        """
        self._running()
        self._abandon(config.name)
        current = self._serving.get(config.name)
        if current is None or _skip_reason(config) is not None:
            if current is not None:
                self.retire(config.name)
            return self.spawn(config)
        if current.config == config:
            return current
        pending = self._start(config, "server.restarted")
        self._starting[config.name] = pending
        if config.lazy:
            self._hand_over(pending)
        return pending

    def retire(self, name: str) -> McpSession | None:
        """Take a server out: its session drains in the background, a replacement starting beside it closes.

        Its tools leave the registry at once, and the registry says why to
        anyone who asks for them; a new session for the same name may start
        right away.

        Returns:
            The draining session, or None when the server had none (it was skipped).

        Raises:
            KeyError: The group knows no server of that name.
            RuntimeError: The group is not entered.
        """
        self._running()
        if name not in self._serving and name not in self._skipped and name not in self._starting:
            raise KeyError(name)
        self._skipped.pop(name, None)
        self._abandon(name)
        session = self._serving.pop(name, None)
        if session is not None:
            self._drain(session, removed=True)
        return session

    # -- lifecycle hooks ---------------------------------------------------------------------

    async def _opened(self, tasks: TaskGroup) -> None:
        await tasks.start(self._bus.run)
        if self._registry is not None and self._changes is not None:
            self._unsubscribe = self._registry.subscribe(self._changes.registry_changed)

    async def _closing(self) -> None:
        async with anyio.create_task_group() as closers:
            for session in [*self._serving.values(), *self._starting.values(), *self._draining, *self._abandoned]:
                closers.start_soon(session.close)
        # Subscribers still hear what closing did (the tools that left the registry).
        self._bus.close()
        await self._bus.wait_finished()

    def _closed(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._registry is not None:
            for namespace in self._absent:
                self._registry.explain_absence(namespace, None)
        self._absent.clear()
        self._bus.close()

    # -- sessions and their events --------------------------------------------------------------

    def _start(self, config: ServerConfig, announce: ManagerEventKind) -> McpSession:
        # The session gets no registry: the group registers its tools, so that a handover is one swap.
        session = McpSession(config, options=self._options)
        session.subscribe(self._session_event)
        if self._changes is not None:
            self._changes.claim(config.namespace, config.name)
        self._announce[session] = announce
        if config.lazy:
            self._announce_now(session)
        self._running().start_soon(_guarded, session, name=f"mcp-session {config.name}")
        return session

    def _serve(self, session: McpSession) -> None:
        self._serving[session.name] = session
        namespace = session.config.namespace
        if self._absent.pop(namespace, None) is not None and self._registry is not None:
            self._registry.explain_absence(namespace, None)  # back again: no longer "draining"

    def _abandon(self, name: str) -> None:
        pending = self._starting.pop(name, None)
        if pending is not None:
            self._announce.pop(pending, None)
            self._abandoned.add(pending)
            # In the background: closing waits for the child to exit, and nothing needs to wait for that.
            self._running().start_soon(self._close_abandoned, pending, name=f"mcp-close {name}")

    async def _close_abandoned(self, session: McpSession) -> None:
        try:
            await session.close()
        finally:
            self._abandoned.discard(session)

    def _session_event(self, event: SessionEvent) -> None:
        # Runs inside the session's own step. A session that becomes ready sends `state` first,
        # then `tools` once it has listed them: the handover happens on the latter.
        session = event.session
        if event.kind == "tools":
            if event.state is SessionState.READY:
                self._tools_listed(session)
            return
        if event.state in (SessionState.ERROR, SessionState.DRAINING, SessionState.CLOSING, SessionState.CLOSED):
            self._withdraw(session)  # failed for good, or on its way out
        if event.state is SessionState.CLOSED:
            self._announce.pop(session, None)  # closed before it settled
        if event.state in (SessionState.READY, SessionState.ERROR):
            self._announce_now(session)
            if event.state is SessionState.ERROR and self._starting.get(session.name) is session:
                self._hand_over(session)

    def _tools_listed(self, session: McpSession) -> None:
        if self._starting.get(session.name) is session:
            self._hand_over(session)
        elif self._serving.get(session.name) is session:
            self._publish(session, previous=self._published.get(session, ()))

    def _announce_now(self, session: McpSession) -> None:
        kind = self._announce.pop(session, None)
        if kind is not None:
            self._bus.emit(ManagerEvent(kind, session.name, state=session.state, reason=session.reason,
                                        session=session))

    def _hand_over(self, pending: McpSession) -> None:
        """Make ``pending`` the server's session and drain the old one, in this very step."""
        del self._starting[pending.name]
        old = self._serving[pending.name]
        self._serve(pending)
        previous = self._published.pop(old, ())
        if pending.state is SessionState.READY:
            self._publish(pending, previous=previous)  # one registry change: the old tools out, the new in
        self._unpublish(old.config, previous)  # only if still there: a failed start, a new toolPrefix
        self._drain(old, removed=False)

    # -- the registry -----------------------------------------------------------------------------

    def _publish(self, session: McpSession, *, previous: tuple[Tool, ...]) -> None:
        if self._registry is None:
            return
        problem = ToolPublisher(session.config, self._registry).publish(session.tools, previous=previous)
        if problem is None:
            self._published[session] = session.tools
            self._problems.pop(session, None)
        else:
            self._problems[session] = problem

    def _withdraw(self, session: McpSession) -> None:
        self._unpublish(session.config, self._published.pop(session, ()))

    def _unpublish(self, config: ServerConfig, tools: tuple[Tool, ...]) -> None:
        if self._registry is not None and tools:
            ToolPublisher(config, self._registry).withdraw(tools)

    # -- draining -----------------------------------------------------------------------------------

    def _drain(self, session: McpSession, *, removed: bool) -> None:
        """Take the session's tools out of the registry now and drain it in the background."""
        seconds = session.config.drain_seconds
        seconds = self._drain_seconds if seconds is None else seconds
        why = "removed from the config" if removed else "replaced by a session with the new settings"
        self._bus.emit(ManagerEvent("server.draining", session.name, state=SessionState.DRAINING,
                                    reason=f"{why}; calls in flight may finish within {seconds:g}s",
                                    session=session))
        self._draining.add(session)
        self._withdraw(session)
        hint: str | None = None
        if removed and self._registry is not None:
            since = datetime.now(UTC).isoformat(timespec="seconds")
            hint = self._absent[session.config.namespace] = str(ServerDraining(session.name, since))
            self._registry.explain_absence(session.config.namespace, hint)
        self._running().start_soon(self._run_drain, session, seconds, hint, name=f"mcp-drain {session.name}")

    async def _run_drain(self, session: McpSession, seconds: float, hint: str | None) -> None:
        ended = await session.drain(seconds)
        self._draining.discard(session)
        namespace = session.config.namespace
        if hint is not None and self._absent.get(namespace) == hint:
            del self._absent[namespace]
            if self._registry is not None:
                self._registry.explain_absence(namespace, None)
        outcome = drain_outcome(ended, seconds)
        self._bus.emit(ManagerEvent("server.removed", session.name, state=session.state, session=session,
                                    reason=outcome if hint is not None else f"its old session closed: {outcome}",
                                    calls_finished=ended.finished, calls_cancelled=ended.cancelled))

    def _row(self, session: McpSession, role: Role) -> ServerStatus:
        row = dict(vars(session.status()))
        problem = self._problems.get(session)
        if problem is not None and session.state is SessionState.READY:
            row["error"] = problem
        return ServerStatus(**row, in_flight=session.in_flight, role=role)


def _skip_reason(config: ServerConfig) -> str | None:
    if not config.enabled:
        return "disabled (enabled: false)"
    if config.transport_kind is None:
        return "neither 'command' nor 'url' is set"
    return None


async def _start_lazily(session: McpSession) -> None:
    with suppress(ServerUnavailable, ServerDraining):  # the session logged why; its row says so
        await session.ensure_started()


async def _guarded(session: McpSession) -> None:
    # A bug in one session must not cancel its siblings through the shared task group.
    try:
        await session.run()
    except Exception:
        logger.exception("MCP session %r stopped on an unexpected error", session.name)
