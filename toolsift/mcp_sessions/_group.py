"""``McpSessionGroup``: the one owner of a set of MCP sessions, by server name.

Each server has one record, a :class:`ServerSlot`: at most one *serving*
session (the mapping's value), a replacement *starting* beside it, old
sessions *draining* (they take no new calls, may finish the ones in flight
for ``drainSeconds``, then close: see ``_draining``), and why it has no
session, if it has none. Every session's owner task runs in the group's task group, guarded so that
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
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import suppress
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskGroup

from .._exceptions import ServerDraining, ServerUnavailable
from ..config import ServerConfig
from ._draining import Drain, check_drain_seconds, drain_seconds_for
from ._events import EventBus, ManagerEvent, ManagerEventKind, ToolChanges
from ._options import SessionOptions
from ._publisher import ToolPublisher
from ._resource import TaskGroupResource
from ._session import McpSession, SessionEvent
from ._slot import Held, ServerSlot, status_row
from ._state import SessionState
from ._status import ROLE_ORDER, ServerStatus

if TYPE_CHECKING:
    from ..registry import Tool, ToolRegistry

__all__ = ["McpSessionGroup", "settled"]

logger = logging.getLogger("toolsift.mcp_sessions")


class McpSessionGroup(TaskGroupResource, Mapping[str, McpSession]):
    """Runs many sessions side by side; leaving ``async with`` closes them all.

    It is a live, read-only mapping from server name to the session serving it
    (replacements still starting and old sessions draining are not in it; see
    :meth:`status`). Leaving the block closes every session: calls still
    running are cancelled (each returns an error result) and child processes
    are reaped. ``McpServerManager`` is a group that also applies configs.

    Args:
        registry: Where the sessions' tools go (None: the sessions keep them).
        options: Settings shared by every session of the group.
        drain_seconds: How long a retired or replaced session may finish its
            calls when its server sets no ``drainSeconds`` (default
            ``options.drain_seconds``, 30).

    Raises:
        ValueError: ``drain_seconds`` is negative or not finite.
    """

    def __init__(
        self,
        registry: ToolRegistry | None = None,
        *,
        options: SessionOptions | None = None,
        drain_seconds: float | None = None,
    ) -> None:
        super().__init__()
        self._registry = registry
        self._options = options if options is not None else SessionOptions()
        self.drain_seconds = self._options.drain_seconds if drain_seconds is None else drain_seconds
        self._slots: dict[str, ServerSlot] = {}
        self._bus = EventBus()
        self._changes = ToolChanges(registry, self._bus) if registry is not None else None
        self._unsubscribe: Callable[[], None] | None = None

    # -- the mapping and what it runs -------------------------------------------------------

    def __getitem__(self, name: str) -> McpSession:
        slot = self._slots.get(name)
        if slot is None or slot.serving is None:
            raise KeyError(name)
        return slot.serving.session

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, slot in self._slots.items() if slot.serving is not None])

    def __len__(self) -> int:
        return sum(slot.serving is not None for slot in self._slots.values())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={s.state.value}' for n, s in self.items())})"

    @property
    def drain_seconds(self) -> float:
        """How long a retired or replaced session may finish its calls, unless its server says otherwise."""
        return self._drain_seconds

    @drain_seconds.setter
    def drain_seconds(self, seconds: float) -> None:
        self._drain_seconds = check_drain_seconds(seconds)

    @property
    def skipped(self) -> Mapping[str, str]:
        """Servers that got no session (disabled ones), with the reason."""
        return {name: slot.skipped for name, slot in self._slots.items() if slot.skipped is not None}

    @property
    def starting(self) -> Mapping[str, McpSession]:
        """Replacements starting beside their server's session, by server name."""
        return {name: slot.starting.session for name, slot in self._slots.items() if slot.starting is not None}

    @property
    def draining(self) -> tuple[McpSession, ...]:
        """Old sessions still finishing their calls."""
        return tuple(held.session for slot in self._slots.values() for held in slot.draining)

    def status(self) -> list[ServerStatus]:
        """One row per session (serving, starting beside it, draining), by server name, then role."""
        rows = []
        for slot in self._slots.values():
            rows += [status_row(held, "serving") for held in (slot.serving,) if held is not None]
            rows += [status_row(held, "starting") for held in (slot.starting,) if held is not None]
            rows += [status_row(held, "draining") for held in slot.draining]
        return sorted(rows, key=lambda row: (row.server, ROLE_ORDER[row.role]))

    def mask_secrets(self, text: str) -> str:
        """``text`` with every secret a session resolved masked (serving, starting or draining ones)."""
        for slot in self._slots.values():
            for held in (slot.serving, slot.starting, *slot.draining):
                if held is not None:
                    text = held.session.mask_secrets(text)
        return text

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

        Returns None (and records why in :attr:`skipped`) for a disabled server.

        Raises:
            ValueError: That server already has a session in this group.
            RuntimeError: The group is not entered.
        """
        self._running()
        slot = self._slots.setdefault(config.name, ServerSlot())
        if slot.serving is not None:
            raise ValueError(f"MCP server {config.name!r} already has a session in this group")
        slot.skipped = _skip_reason(config)
        if slot.skipped is not None:
            logger.info("MCP server %r is not started: %s", config.name, slot.skipped)
            return None
        held = self._start(config, "server.added")
        self._serve(slot, held)
        return held.session

    async def start_all(self, servers: Iterable[ServerConfig]) -> dict[str, McpSession]:
        """Start every server in parallel; wait until each non-lazy one is ready or failed.

        A server that fails to start ends in state ``error``; the rest go on.
        Returns the new sessions by name.
        """
        started = [s for s in (self.spawn(config) for config in servers) if s is not None]
        await settled(started)
        return {s.name: s for s in started}

    async def start_lazy(self, namespaces: Iterable[str]) -> list[str]:
        """Start the lazy servers, not started yet, whose tools are named ``<namespace>__*``; wait for each.

        A server that fails to start ends in state ``error`` (its status row
        says why); the others go on. Returns the names of the servers started.
        """
        wanted = set(namespaces)
        idle = [
            session
            for session in self.values()
            if session.config.lazy and session.state is SessionState.IDLE and session.config.namespace in wanted
        ]
        async with anyio.create_task_group() as starting:
            for session in idle:
                logger.info("MCP server %r (lazy) is needed now; starting it", session.name)
                starting.start_soon(_start_lazily, session)
        return [session.name for session in idle]

    async def add(self, config: ServerConfig) -> McpSession | None:
        """Start one server and wait until it is ready or failed (lazy ones are not waited for)."""
        session = self.spawn(config)
        if session is not None:
            await settled([session])
        return session

    def replace(self, config: ServerConfig) -> McpSession | None:
        """Start a session with new settings beside the server's session; it takes over once settled.

        See the module docstring for the handover. A replacement still starting
        from an earlier call is closed in the background (it never served), so
        the newest settings win; settings equal to the serving session's just
        close it. A server without a session is spawned; a disabled one is retired.

        Returns:
            The session that serves (or will serve) the server, or None.

        Raises:
            RuntimeError: The group is not entered.
        """
        self._running()
        slot = self._slots.get(config.name)
        current = slot.serving if slot is not None else None
        if slot is None or current is None or _skip_reason(config) is not None:
            if current is not None:
                self.retire(config.name)
            return self.spawn(config)
        self._abandon(slot)
        if current.session.config == config:
            return current.session
        pending = slot.starting = self._start(config, "server.restarted")
        if config.lazy:
            self._hand_over(slot)
        return pending.session

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
        slot = self._slots.get(name)
        if slot is None or (slot.serving is None and slot.skipped is None and slot.starting is None):
            raise KeyError(name)
        slot.skipped = None
        self._abandon(slot)
        held, slot.serving = slot.serving, None
        if held is not None:
            self._drain(slot, held, removed=True)
        self._tidy(name)
        return held.session if held is not None else None

    # -- lifecycle hooks ---------------------------------------------------------------------

    async def _opened(self, tasks: TaskGroup) -> None:
        await tasks.start(self._bus.run)
        if self._registry is not None and self._changes is not None:
            self._unsubscribe = self._registry.subscribe(self._changes.registry_changed)

    async def _closing(self) -> None:
        async with anyio.create_task_group() as closers:
            for slot in self._slots.values():
                for held in (slot.serving, slot.starting, *slot.draining):
                    if held is not None:
                        closers.start_soon(held.session.close)
                for session in slot.abandoned:
                    closers.start_soon(session.close)
        # Subscribers still hear what closing did (the tools that left the registry).
        self._bus.close()
        await self._bus.wait_finished()

    def _closed(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        for slot in self._slots.values():
            if slot.absent is not None:
                self._explain(slot.absent[0], None)
        self._bus.close()

    # -- sessions and their events --------------------------------------------------------------

    def _start(self, config: ServerConfig, announce: ManagerEventKind) -> Held:
        # The session gets no registry: the group registers its tools, so that a handover is one swap.
        session = McpSession(config, options=self._options)
        session.subscribe(self._session_event)
        if self._changes is not None:
            self._changes.claim(config.namespace, config.name)
        held = Held(session, announce)
        if config.lazy:
            self._announce_now(held)
        self._running().start_soon(_guarded, session, name=f"mcp-session {config.name}")
        return held

    def _serve(self, slot: ServerSlot, held: Held) -> None:
        slot.serving = held
        self._explain(held.session.config.namespace, None)  # back again: no longer "draining"

    def _abandon(self, slot: ServerSlot) -> None:
        pending, slot.starting = slot.starting, None
        if pending is not None:
            slot.abandoned.add(pending.session)
            # In the background: closing waits for the child to exit, and nothing needs to wait for that.
            self._running().start_soon(
                self._close_abandoned, slot, pending.session, name=f"mcp-close {pending.session.name}"
            )

    async def _close_abandoned(self, slot: ServerSlot, session: McpSession) -> None:
        try:
            await session.close()
        finally:
            slot.abandoned.discard(session)
            self._tidy(session.name)

    def _tidy(self, name: str) -> None:
        slot = self._slots.get(name)
        if slot is not None and slot.empty:
            del self._slots[name]

    def _session_event(self, event: SessionEvent) -> None:
        # Runs inside the session's own step. A session that becomes ready sends `state` first,
        # then `tools` once it has listed them: the handover happens on the latter.
        # A replacement abandoned before it served has no record: nothing waits to hear of it.
        slot = self._slots.get(event.session.name)
        held = slot.held(event.session) if slot is not None else None
        if slot is None or held is None or event.kind in ("prompts", "resources"):
            return  # a relisted prompt or resource list changes nothing the group holds
        if event.kind == "tools":
            if event.state is SessionState.READY:
                if slot.starting is held:
                    self._hand_over(slot)
                elif slot.serving is held:
                    self._publish(held, previous=held.published)
            return
        if event.state in (SessionState.ERROR, SessionState.DRAINING, SessionState.CLOSING, SessionState.CLOSED):
            self._withdraw(held)  # failed for good, or on its way out
        if event.state is SessionState.CLOSED:
            held.announce = None  # closed before it settled
        if event.state in (SessionState.READY, SessionState.ERROR):
            self._announce_now(held)
            if event.state is SessionState.ERROR and slot.starting is held:
                self._hand_over(slot)

    def _announce_now(self, held: Held) -> None:
        kind, held.announce = held.announce, None
        if kind is not None:
            session = held.session
            self._bus.emit(
                ManagerEvent(kind, session.name, state=session.state, reason=session.reason, session=session)
            )

    def _hand_over(self, slot: ServerSlot) -> None:
        """Make the replacement the server's session and drain the old one, in this very step."""
        pending, old = slot.starting, slot.serving
        assert pending is not None and old is not None  # a replacement starts only beside a serving session
        slot.starting = None
        self._serve(slot, pending)
        previous, old.published = old.published, ()
        if pending.session.state is SessionState.READY:
            self._publish(pending, previous=previous)  # one registry change: the old tools out, the new in
        self._unpublish(old.session.config, previous)  # only if still there: a failed start, a new toolPrefix
        self._drain(slot, old, removed=False)

    # -- the registry -----------------------------------------------------------------------------

    def _publish(self, held: Held, *, previous: tuple[Tool, ...]) -> None:
        if self._registry is None:
            return
        session = held.session
        held.problem = ToolPublisher(session.config, self._registry).publish(
            session.tools, previous=previous, held=session.held_back()
        )
        if held.problem is None:
            held.published = session.tools

    def _withdraw(self, held: Held) -> None:
        tools, held.published = held.published, ()
        self._unpublish(held.session.config, tools)

    def _unpublish(self, config: ServerConfig, tools: tuple[Tool, ...]) -> None:
        if self._registry is not None and tools:
            ToolPublisher(config, self._registry).withdraw(tools)

    def _explain(self, namespace: str, hint: str | None, slot: ServerSlot | None = None) -> None:
        """Set (or clear) the registry's hint for ``namespace``, held by ``slot``: one hint per namespace."""
        if self._registry is None:
            return
        cleared = False
        for other in self._slots.values():
            if other.absent is not None and other.absent[0] == namespace:
                other.absent, cleared = None, True
        if slot is not None and hint is not None:
            slot.absent = (namespace, hint)
        if hint is not None or cleared:
            self._registry.explain_absence(namespace, hint)

    # -- draining -----------------------------------------------------------------------------------

    def _drain(self, slot: ServerSlot, held: Held, *, removed: bool) -> None:
        """Stop the session taking calls and take its tools out of the registry now; drain it in the background."""
        session = held.session
        drain = Drain(session.name, drain_seconds_for(session.config, self._drain_seconds), removed=removed)
        self._bus.emit(
            ManagerEvent(
                "server.draining", session.name, state=SessionState.DRAINING, reason=drain.announcement, session=session
            )
        )
        slot.draining.append(held)
        session.stop_taking_calls(drain)
        self._withdraw(held)
        if removed:
            self._explain(session.config.namespace, str(drain.error()), slot)
        self._running().start_soon(self._run_drain, slot, held, drain, name=f"mcp-drain {session.name}")

    async def _run_drain(self, slot: ServerSlot, held: Held, drain: Drain) -> None:
        session = held.session
        ended = await session.drain()
        slot.draining.remove(held)
        if slot.absent is not None and slot.absent[1] == str(drain.error()):
            self._explain(slot.absent[0], None)
        self._bus.emit(
            ManagerEvent(
                "server.removed",
                session.name,
                state=session.state,
                session=session,
                reason=drain.outcome(ended),
                calls_finished=ended.finished,
                calls_cancelled=ended.cancelled,
            )
        )
        self._tidy(session.name)


async def settled(sessions: Iterable[McpSession]) -> None:
    """Wait until each non-lazy session of ``sessions`` is ready or failed (a lazy one connects when used)."""
    async with anyio.create_task_group() as waiters:
        for session in sessions:
            if not session.config.lazy:
                waiters.start_soon(session.wait_settled)


def _skip_reason(config: ServerConfig) -> str | None:
    return None if config.enabled else "disabled (enabled: false)"


async def _start_lazily(session: McpSession) -> None:
    with suppress(ServerUnavailable, ServerDraining):  # the session logged why; its row says so
        await session.ensure_started()


async def _guarded(session: McpSession) -> None:
    # A bug in one session must not cancel its siblings through the shared task group.
    try:
        await session.run()
    except Exception:
        logger.exception("MCP session %r stopped on an unexpected error", session.name)
