"""What a session group (and the ``McpServerManager`` holding it) tells subscribers, and how.

Events are delivered from the group's own task, in the order they were
queued, and only after the step that queued them has finished. That order
matters: a session announces ``ready`` before it registers its tools, and a
subscriber that reacts to ``server.added`` or ``tools.changed`` by reading the
registry must see the finished state, never the step in between.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, final

import anyio
from anyio.abc import TaskStatus
from anyio.streams.memory import MemoryObjectSendStream

from .._exceptions import ConfigError
from ._state import SessionState

if TYPE_CHECKING:
    from ..registry import ToolRegistry
    from ..registry._internal import RegistryChange
    from ._session import McpSession

__all__ = ["EventBus", "ManagerEvent", "ManagerEventKind", "ToolChanges"]

logger = logging.getLogger("toolsift.mcp_sessions")

ManagerEventKind = Literal[
    "server.added",
    "server.draining",
    "server.removed",
    "server.restarted",
    "tools.changed",
    "config.rejected",
    "server.rejected",
    "server.untrusted",
]
Subscriber = Callable[["ManagerEvent"], object]


@final
@dataclass(frozen=True)
class ManagerEvent:
    """One thing that happened to the servers a session group (or ``McpServerManager``) runs.

    Kinds:

    - ``server.added``: a new server's session started; ``state`` is ``ready``
      (its tools are registered), ``error`` (``reason`` says why), or ``idle``
      for a lazy server.
    - ``server.restarted``: a changed server's new session took over (``ready``
      or ``error``); the old one is draining.
    - ``server.draining``: a session stopped taking new calls (its server was
      removed, disabled or replaced); its tools have left the registry and the
      calls it is running may finish.
    - ``server.removed``: a draining session closed; ``calls_finished`` and
      ``calls_cancelled`` say how its calls in flight ended, and ``reason``
      says the same in words. For a changed server this is its old session;
      the server keeps serving.
    - ``tools.changed``: the tools the registry offers for ``server`` changed
      (names, schemas or tier); ``tools`` lists them now. Refresh schema sets on it.
    - ``config.rejected``: a new config was invalid as a whole (unreadable, not
      JSON, a bad section outside the servers) and nothing was applied;
      ``error`` holds every problem and the running config stays in force.
    - ``server.rejected``: one server's entry in a new config has problems;
      ``error`` names the field. That server keeps what it runs (nothing, if
      it was not running) and the rest of the config applies.
    - ``server.untrusted``: a new config adds a server, or changes what one
      launches, and the project's trust does not cover it (see
      ``TrustedLaunches``); ``error`` says how to trust it. That server keeps
      what it runs (nothing, if it was not running) and the rest applies.

    Attributes:
        kind: What happened.
        server: The server concerned (None for ``config.rejected``).
        state: The session's state when it happened.
        reason: Why: a session's error, a drain's outcome, a rejection's message.
        tools: For ``tools.changed``, the server's canonical tool names now registered.
        session: The session concerned (the old one for ``server.draining`` and
            ``server.removed``).
        error: For ``config.rejected``, ``server.rejected`` and ``server.untrusted``, the problems as one
            ``ConfigError``.
        calls_finished: For ``server.removed``, calls in flight that finished on their own.
        calls_cancelled: For ``server.removed``, calls in flight cancelled when the drain time ran out.
    """

    kind: ManagerEventKind
    server: str | None = None
    state: SessionState | None = None
    reason: str | None = None
    tools: tuple[str, ...] = ()
    session: McpSession | None = None
    error: ConfigError | None = None
    calls_finished: int = 0
    calls_cancelled: int = 0

    def __str__(self) -> str:
        head = self.kind if self.server is None else f"{self.kind} {self.server}"
        if self.kind == "tools.changed":
            return f"{head}: {len(self.tools)} tools"
        details = [detail for detail in (self.state.value if self.state else None, self.reason) if detail]
        return f"{head}: {'; '.join(details)}" if details else head


# A callable is evaluated when its turn to be delivered comes (None: nothing to deliver).
Queued = ManagerEvent | Callable[[], ManagerEvent | None]


@final
class EventBus:
    """Queues events and delivers them to subscribers from :meth:`run`, in order."""

    def __init__(self) -> None:
        # The queue exists only while run() does, so a bus that never ran holds nothing to close.
        self._send: MemoryObjectSendStream[Queued] | None = None
        self._finished = anyio.Event()
        self._subscribers: list[Subscriber] = []

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(event)`` for every event; returns the unsubscriber."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):  # already removed
                self._subscribers.remove(callback)

        return unsubscribe

    def emit(self, item: ManagerEvent | Callable[[], ManagerEvent | None]) -> None:
        """Queue an event, or a function that builds it when its turn comes; never blocks.

        Before :meth:`run` and after :meth:`close` events are dropped: nobody
        is there to deliver them.
        """
        if self._send is not None:
            with contextlib.suppress(anyio.ClosedResourceError):
                self._send.send_nowait(item)

    def close(self) -> None:
        """Let :meth:`run` deliver what is queued, then return."""
        if self._send is not None:
            self._send.close()

    async def wait_finished(self) -> None:
        """Wait until :meth:`run` has returned (after :meth:`close` and the last delivery)."""
        await self._finished.wait()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Deliver events until :meth:`close`; cancelling it drops what is still queued."""
        self._send, receive = anyio.create_memory_object_stream[Queued](math.inf)
        task_status.started()
        try:
            with receive:
                async for item in receive:
                    event = item() if callable(item) else item
                    if event is not None:
                        self._deliver(event)
        finally:
            self._finished.set()

    def _deliver(self, event: ManagerEvent) -> None:
        refused = event.kind in ("config.rejected", "server.rejected", "server.untrusted")
        failed = refused or event.state is SessionState.ERROR
        logger.log(logging.WARNING if failed else logging.INFO, "MCP %s", event)
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception:
                logger.exception("A subscriber of the MCP session group failed: %r", callback)


@final
class ToolChanges:
    """Turns registry changes in the group's namespaces into ``tools.changed`` events.

    Args:
        registry: The registry the group's sessions publish into.
        bus: Where the events go.
    """

    def __init__(self, registry: ToolRegistry, bus: EventBus) -> None:
        self._registry = registry
        self._bus = bus
        self._owners: dict[str, str] = {}  # tool namespace -> server, kept for the last event of a removed server
        self._snapshots: dict[str, tuple[object, ...]] = {}

    def claim(self, namespace: str, server: str) -> None:
        """Report changes of ``namespace`` as changes of ``server``'s tools."""
        self._owners[namespace] = server

    def registry_changed(self, change: RegistryChange) -> None:
        """Queue a ``tools.changed`` check for a namespace one of the group's sessions owns."""
        namespace = change.server
        if namespace is not None and namespace in self._owners:
            self._bus.emit(lambda: self._event(namespace))

    def _event(self, namespace: str) -> ManagerEvent | None:
        """``tools.changed`` when the namespace's schemas differ from the last ones announced.

        Checked at delivery, so changes that end where they started (a
        handover to a session offering exactly the old schemas) make no event.
        """
        tools = self._registry.tools(server=namespace)
        snapshot = tuple((t.spec, self._registry.is_internal(t.spec.name)) for t in tools)
        if snapshot == self._snapshots.get(namespace, ()):
            return None
        if snapshot:
            self._snapshots[namespace] = snapshot
        else:
            self._snapshots.pop(namespace, None)
        return ManagerEvent("tools.changed", self._owners[namespace], tools=tuple(t.spec.name for t in tools))
