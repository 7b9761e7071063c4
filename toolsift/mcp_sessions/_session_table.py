"""``SessionTable``: which session serves each server, which replacements start, which old ones drain.

It carries out one server's part of a reload (add, remove, change) and the
handover of a changed server, and turns what happens into ``ManagerEvent``
objects; ``McpServerManager`` decides what to apply and owns the lifecycle.

Everything that touches the registry for a handover happens inside one
synchronous step, with no await in between: the old session's tools leave
while the new session is announcing ``ready``, right before it registers its
own, so no other task (a turn building its schemas) runs in between.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, final

import anyio
from anyio.abc import TaskGroup

from .._exceptions import ServerDraining
from ._config import ServerConfig
from ._group import _guarded
from ._manager_events import EventBus, ManagerEvent, ManagerEventKind
from ._options import SessionOptions
from ._publisher import ToolPublisher
from ._session import McpSession
from ._state import SessionEvent, SessionState, SessionStatus

if TYPE_CHECKING:
    from ..registry import RegistryChange, ToolRegistry

__all__ = ["ServerStatus", "SessionTable", "wait_draining"]

logger = logging.getLogger("toolsift.mcp_sessions")

Role = Literal["serving", "starting", "draining"]
_ROLE_ORDER: dict[Role, int] = {"serving": 0, "starting": 1, "draining": 2}


@final
@dataclass(frozen=True)
class ServerStatus(SessionStatus):
    """A session's row in ``McpServerManager.status()``.

    Attributes:
        in_flight: Calls running through the session now.
        role: ``serving`` (the server's session), ``starting`` (a replacement
            starting beside it) or ``draining`` (an old session finishing its calls).
    """

    in_flight: int = 0
    role: Role = "serving"

    def line(self) -> str:
        """The row as one log line."""
        text = super().line() if self.role == "serving" else f"[{self.role}] {super().line()}"
        return f"{text}; {self.in_flight} calls in flight" if self.in_flight else text


def _skip_reason(config: ServerConfig) -> str | None:
    if not config.enabled:
        return "disabled (enabled: false)"
    if config.transport_kind is None:
        return "neither 'command' nor 'url' is set"
    return None


@final
class SessionTable:
    """The sessions of one manager, by role, and the transitions between roles.

    Args:
        registry: Where sessions register their tools.
        options: Settings of every session.
        bus: Where events go.
        drain_seconds: How long a draining session may finish its calls.
    """

    def __init__(self, registry: ToolRegistry, options: SessionOptions, bus: EventBus, drain_seconds: float) -> None:
        self.registry = registry
        self.options = options
        self.bus = bus
        self.drain_seconds = drain_seconds
        self.group: TaskGroup | None = None  # set while the manager runs
        self.current: dict[str, McpSession] = {}
        self.pending: dict[str, McpSession] = {}
        self.draining: set[McpSession] = set()
        self.skipped: dict[str, str] = {}
        self._announce: dict[McpSession, ManagerEventKind] = {}
        self._owners: dict[str, str] = {}  # tool namespace -> server, for tools.changed
        self._snapshots: dict[str, tuple[object, ...]] = {}
        self._absent: dict[str, str] = {}  # namespaces whose registry hint says "draining"

    def sessions(self) -> list[McpSession]:
        """Every session: serving, starting and draining."""
        return [*self.current.values(), *self.pending.values(), *self.draining]

    def status(self) -> list[ServerStatus]:
        """One row per session, by server name, then serving, starting, draining."""
        rows = [_row(s, "serving") for s in self.current.values()]
        rows += [_row(s, "starting") for s in self.pending.values()]
        rows += [_row(s, "draining") for s in self.draining]
        return sorted(rows, key=lambda row: (row.server, _ROLE_ORDER[row.role]))

    def forget_hints(self) -> None:
        """Take the "draining" hints out of the registry (the manager is stopping)."""
        for namespace in self._absent:
            self.registry.explain_absence(namespace, None)
        self._absent.clear()

    # -- one server's part of a reload --------------------------------------------------

    def adopt(self, session: McpSession) -> None:
        """Make a session started elsewhere the one serving its server."""
        self._watch(session)
        self.current[session.name] = session

    def add(self, config: ServerConfig) -> None:
        """Start a session for a new server (or record why it gets none)."""
        reason = _skip_reason(config)
        if reason is not None:
            self.skipped[config.name] = reason
            logger.info("MCP server %r is not started: %s", config.name, reason)
            return
        self.skipped.pop(config.name, None)
        if self._absent.pop(config.namespace, None) is not None:
            self.registry.explain_absence(config.namespace, None)  # back again: no longer "draining"
        self.current[config.name] = self._spawn(config, "server.added")

    def remove(self, name: str) -> None:
        """Drain the server's session, if it has one."""
        self.skipped.pop(name, None)
        session = self.current.pop(name, None)
        if session is not None:
            self._drain(session, removed=True)

    def change(self, config: ServerConfig) -> None:
        """Start a replacement beside the server's session (or add/remove when one side has none)."""
        current = self.current.get(config.name)
        if current is None or _skip_reason(config) is not None:
            self.remove(config.name)
            self.add(config)
        elif current.config != config:
            pending = self._spawn(config, "server.restarted")
            self.pending[config.name] = pending
            if config.lazy:
                self._hand_over(pending)
        # else: back to the settings the old session runs; closing the replacement was all there was to do.

    # -- sessions and their events ------------------------------------------------------

    def _spawn(self, config: ServerConfig, announce: ManagerEventKind) -> McpSession:
        session = McpSession(config, registry=self.registry, options=self.options)
        self._watch(session)
        self._announce[session] = announce
        if config.lazy:
            self._announce_now(session)
        self._group().start_soon(_guarded, session, name=f"mcp-session {config.name}")
        return session

    def _group(self) -> TaskGroup:
        if self.group is None:
            raise RuntimeError("McpServerManager is not running; use 'async with McpServerManager(...)'")
        return self.group

    def _watch(self, session: McpSession) -> None:
        self._owners[session.config.namespace] = session.name
        session.subscribe(self._session_event)

    def _session_event(self, event: SessionEvent) -> None:
        # Runs inside the session's own step: for `ready`, right before it registers its tools.
        session = event.session
        if event.kind != "state":
            return
        if event.state is SessionState.CLOSED:
            self._announce.pop(session, None)  # a replacement closed before it settled
        if event.state not in (SessionState.READY, SessionState.ERROR):
            return
        self._announce_now(session)
        if self.pending.get(session.name) is session:
            self._hand_over(session)

    def _announce_now(self, session: McpSession) -> None:
        kind = self._announce.pop(session, None)
        if kind is not None:
            self.bus.emit(ManagerEvent(kind, session.name, state=session.state, reason=session.reason,
                                       session=session))

    def _hand_over(self, pending: McpSession) -> None:
        """Make ``pending`` the server's session and drain the old one, in this very step."""
        name = pending.name
        del self.pending[name]
        old = self.current[name]
        self.current[name] = pending
        self._drain(old, removed=False)

    def _drain(self, session: McpSession, *, removed: bool) -> None:
        """Take the session's tools out of the registry now and drain it in the background."""
        why = "removed from the config" if removed else "replaced by a session with the new settings"
        self.bus.emit(ManagerEvent("server.draining", session.name, state=SessionState.DRAINING,
                                   reason=f"{why}; calls in flight may finish within {self.drain_seconds:g}s",
                                   session=session))
        namespace = session.config.namespace
        # Only if they are still what the namespace holds (the session itself does the same when it drains).
        ToolPublisher(session.config, self.registry).withdraw(session.tools)
        hint: str | None = None
        if removed:
            since = datetime.now(UTC).isoformat(timespec="seconds")
            hint = self._absent[namespace] = str(ServerDraining(session.name, since))
            self.registry.explain_absence(namespace, hint)
        self.draining.add(session)
        self._group().start_soon(self._run_drain, session, hint, name=f"mcp-drain {session.name}")

    async def _run_drain(self, session: McpSession, hint: str | None) -> None:
        started = anyio.current_time()
        await session.drain(self.drain_seconds)
        ran_out = anyio.current_time() - started >= self.drain_seconds > 0
        self.draining.discard(session)
        namespace = session.config.namespace
        if hint is not None and self._absent.get(namespace) == hint:
            del self._absent[namespace]
            self.registry.explain_absence(namespace, None)
        if ran_out:
            outcome = f"drainSeconds ({self.drain_seconds:g}s) ran out; calls still running were cancelled"
        else:
            outcome = "every call in flight had finished"
        self.bus.emit(ManagerEvent("server.removed", session.name, state=session.state, session=session,
                                   reason=outcome if hint is not None else f"its old session closed: {outcome}"))

    # -- tools.changed ---------------------------------------------------------------------

    def registry_changed(self, change: RegistryChange) -> None:
        """Queue a ``tools.changed`` check for a namespace one of the sessions owns."""
        namespace = change.server
        if namespace is not None and namespace in self._owners:
            self.bus.emit(lambda: self._tools_event(namespace))

    def _tools_event(self, namespace: str) -> ManagerEvent | None:
        """``tools.changed`` when the namespace's schemas differ from the last ones announced.

        Checked at delivery, so the two registry changes of one handover (old
        tools out, new ones in) make at most one event, and none at all when the
        new session offers exactly the old schemas.
        """
        tools = self.registry.tools(server=namespace)
        snapshot = tuple((t.spec, self.registry.is_internal(t.spec.name)) for t in tools)
        if snapshot == self._snapshots.get(namespace, ()):
            return None
        if snapshot:
            self._snapshots[namespace] = snapshot
        else:
            self._snapshots.pop(namespace, None)
        return ManagerEvent("tools.changed", self._owners[namespace], tools=tuple(t.spec.name for t in tools))


async def wait_draining(session: McpSession) -> None:
    """Wait until a session whose drain was scheduled has stopped taking calls (or is closed)."""
    done = (SessionState.DRAINING, SessionState.CLOSED)
    if session.state in done:
        return
    reached = anyio.Event()
    unsubscribe = session.subscribe(lambda event: reached.set() if event.state in done else None)
    try:
        await reached.wait()
    finally:
        unsubscribe()


def _row(session: McpSession, role: Role) -> ServerStatus:
    return ServerStatus(**vars(session.status()), in_flight=session.in_flight, role=role)
