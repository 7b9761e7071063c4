"""Every connected server's served skills, kept current: taken again when its session (re)connects, when a
hot reload adds, replaces or removes it, and looked up afresh when the user's approvals change."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Protocol, final

import anyio
from anyio.abc import TaskStatus

from ..config import SkillGrants
from ..mcp_sessions import McpSession, McpSessionGroup
from ..mcp_sessions._internal import ManagerEvent, SessionState
from ._mcp_skills import McpServedSkill, SkillsSession, grant_in_force, served_skills

__all__ = ["ServedSkills"]

logger = logging.getLogger("toolsift.search")


class _SessionChange(Protocol):
    """What :meth:`ServedSkills.follow` reads of a session's event."""

    @property
    def session(self) -> McpSession: ...

    @property
    def kind(self) -> str: ...

    @property
    def state(self) -> SessionState: ...


@final
class ServedSkills:
    """The skills every connected server offers, as last taken (see :meth:`refresh` and :meth:`follow`).

    Args:
        grants: The user's approvals of served skills' ``allowed-tools``; None approves nothing.
    """

    def __init__(self, grants: SkillGrants | None = None) -> None:
        self.grants = grants
        self._taken: dict[str, tuple[McpServedSkill, ...]] = {}
        self._sources: dict[str, object] = {}  # server -> the session its skills were taken from
        self._takes: dict[str, int] = {}  # server -> how many takes began
        self._stamp = grants.stamp() if grants is not None else None
        self._subscribers: list[Callable[[str], object]] = []

    def subscribe(self, callback: Callable[[str], object]) -> Callable[[], None]:
        """Call ``callback(server)`` each time a server's skills were taken again; returns the unsubscriber."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    @property
    def skills(self) -> tuple[McpServedSkill, ...]:
        """Every server's skills, as last taken, each approved or not as the grants store says now."""
        self._follow_grants()
        return tuple(skill for taken in self._taken.values() for skill in taken)

    def _follow_grants(self) -> None:
        """Re-read the approvals when their store changed since the skills were taken (approved elsewhere)."""
        stamp = self.grants.stamp() if self.grants is not None else None
        if stamp == self._stamp:
            return
        self._stamp = stamp
        for server, taken in self._taken.items():
            self._taken[server] = tuple(
                replace(s, approved=grant_in_force(self.grants, server, s.uri, s.resources, s.requested_tools))
                for s in taken
            )

    async def refresh(self, sessions: Mapping[str, SkillsSession]) -> None:
        """Take the skills of every server that declares the extension; a server that fails is logged and skipped.

        The servers are asked side by side: start-up waits for the slowest, not for their sum.
        """
        for name in [name for name in self._taken if name not in sessions]:
            await self.refresh_server(name, None)
        async with anyio.create_task_group() as group:
            for name, session in sessions.items():
                group.start_soon(self.refresh_server, name, session)

    async def refresh_server(self, name: str, session: SkillsSession | None) -> None:
        """Take server ``name``'s skills again from ``session`` (None: the server is gone, and its skills too).

        Approvals are looked up afresh, so a skill whose files changed since it was approved is taken unapproved.
        """
        self._sources[name] = session
        self._takes[name] = take = self._takes.get(name, 0) + 1
        taken: list[McpServedSkill] = []
        if session is not None:
            try:
                taken = await served_skills(session, self.grants)
            except Exception as exc:  # one server's failure leaves the others' skills
                logger.warning("MCP server %r: its skills could not be listed: %s", name, exc)
        if self._takes[name] != take:  # a later take of the same server began meanwhile: it wins
            return
        self._taken[name] = tuple(taken)
        if session is None:
            del self._taken[name], self._sources[name]
        for callback in list(self._subscribers):
            try:
                callback(name)
            except Exception:  # one subscriber's bug must not stop the others
                logger.exception("a subscriber of served skills failed")

    async def follow(
        self, sessions: McpSessionGroup, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Take a server's skills again whenever they may have changed, until cancelled.

        That is when its session (re)connects (a reconnect after a loss, a lazy server's first start), when a
        hot reload replaces or adds it, and when it is removed (its skills leave). Run it in a task group:
        ``await tg.start(served.follow, box.sessions)`` returns once it listens.
        """
        send, receive = anyio.create_memory_object_stream[str](math.inf)
        watched: dict[int, tuple[McpSession, Callable[[], None]]] = {}

        def session_event(event: _SessionChange) -> None:
            if event.kind == "state" and event.state is SessionState.READY:
                send.send_nowait(event.session.name)

        def watch(session: McpSession) -> None:
            if id(session) not in watched:
                watched[id(session)] = (session, session.subscribe(session_event))

        def manager_event(event: ManagerEvent) -> None:
            session, server = event.session, event.server
            if session is None or server is None:
                return
            if event.kind in ("server.added", "server.restarted"):
                watch(session)
                if session.state is SessionState.READY and self._sources.get(server) is not session:
                    send.send_nowait(server)
            elif event.kind in ("server.draining", "server.removed"):
                _, unsubscribe = watched.pop(id(session), (session, _nothing))
                unsubscribe()
                if self._sources.get(server) is session:
                    send.send_nowait(server)

        for running in sessions.values():
            watch(running)
        stop = sessions.subscribe(manager_event)
        try:
            task_status.started()
            async with receive:
                async for server in receive:
                    now = sessions.get(server)
                    await self.refresh_server(
                        server, now if now is not None and now.state is SessionState.READY else None
                    )
        finally:
            stop()
            for _, unsubscribe in watched.values():
                unsubscribe()
            send.close()


def _nothing() -> None:
    """An unsubscriber for a session that was never watched."""
