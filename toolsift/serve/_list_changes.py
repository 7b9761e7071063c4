"""A gateway's prompt and resource lists, whose changes upstream servers announce, told to its own clients.

The gateway serves its upstream servers' prompts and resources as they list
them. When a server announces that one of those lists changed (on its listen
stream, or as a handshake-era notification), its session lists it again and
says so (a session event of kind ``prompts`` or ``resources``); a server that
comes, goes or is replaced changes them too. :class:`UpstreamListAnnouncer`
hears all of that and, when the list the gateway serves is not what it was,
tells its clients in both eras: a ``prompts/list_changed`` or
``resources/list_changed`` notification on each handshake-era connection and
the matching event on ``subscriptions/listen`` streams. As for tools
(``ToolListAnnouncer``), a burst of changes gives one notification, and a
change that leaves the served list as it was gives none.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Hashable, Iterable
from typing import Literal, final

import anyio
from anyio.abc import TaskStatus
from mcp.server.session import ServerSession
from mcp.server.subscriptions import PromptsListChanged, ResourcesListChanged, SubscriptionBus

from ..mcp_sessions import McpSession, McpSessionGroup
from ..mcp_sessions._internal import ManagerEvent

__all__ = ["UpstreamListAnnouncer"]

logger = logging.getLogger("toolsift.serve")

ListKind = Literal["prompts", "resources"]
_KINDS: tuple[ListKind, ...] = ("prompts", "resources")


@final
class UpstreamListAnnouncer:
    """Announces changes of the prompt and resource lists a gateway serves; run :meth:`run` in a task group.

    Args:
        bus: The subscription bus the server's ``ListenHandler`` reads.
        connections: The handshake-era client connections to tell (``ToolListAnnouncer`` tracks them).
        signatures: For each list, a value that differs whenever the served list differs.
    """

    def __init__(
        self,
        bus: SubscriptionBus,
        connections: Callable[[], Iterable[ServerSession]],
        signatures: dict[ListKind, Callable[[], Hashable]],
    ) -> None:
        self._bus = bus
        self._connections = connections
        self._signatures = signatures

    async def announce(self, kind: ListKind) -> None:
        """Tell every client that list ``kind`` changed."""
        for session in list(self._connections()):
            try:
                if kind == "prompts":
                    await session.send_prompt_list_changed()
                else:
                    await session.send_resource_list_changed()
            except Exception:
                # A connection that went away mid-send must not keep the others from hearing.
                logger.debug("could not announce a %s-list change to a client", kind, exc_info=True)
        await self._bus.publish(PromptsListChanged() if kind == "prompts" else ResourcesListChanged())

    async def run(
        self, sessions: McpSessionGroup, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Announce every change of the served lists until cancelled; cancellation ends it at once."""
        send, receive = anyio.create_memory_object_stream[ListKind](math.inf)
        watched: dict[int, Callable[[], None]] = {}

        def watch(session: McpSession) -> None:
            if id(session) not in watched:
                watched[id(session)] = session.subscribe(
                    lambda event: send.send_nowait(event.kind) if event.kind in _KINDS else None
                )

        def server_event(event: ManagerEvent) -> None:
            if event.session is None:
                return
            if event.kind in ("server.added", "server.restarted"):
                watch(event.session)
            elif event.kind == "server.removed":
                watched.pop(id(event.session), lambda: None)()
            if event.kind in ("server.added", "server.restarted", "server.draining", "server.removed"):
                for kind in _KINDS:
                    send.send_nowait(kind)

        for running in sessions.values():
            watch(running)
        stop = sessions.subscribe(server_event)
        last = {kind: signature() for kind, signature in self._signatures.items()}
        try:
            task_status.started()
            async with receive:
                async for kind in receive:
                    current = self._signatures[kind]()
                    if current != last[kind]:
                        last[kind] = current
                        await self.announce(kind)
        finally:
            stop()
            for unsubscribe in watched.values():
                unsubscribe()
            send.close()
