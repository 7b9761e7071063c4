"""``ServerSlot``: what a session group holds for one server name, in one record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ._events import ManagerEventKind
from ._session import McpSession
from ._state import SessionState
from ._status import Role, ServerStatus

if TYPE_CHECKING:
    from ..registry import Tool

__all__ = ["Held", "ServerSlot", "status_row"]


@dataclass(eq=False)
class Held:
    """One session the group runs, with what the group knows of it."""

    session: McpSession
    announce: ManagerEventKind | None  # what subscribers hear once it settles; None once said
    published: tuple[Tool, ...] = ()  # its tools in the registry
    problem: str | None = None  # why its tools, though listed, could not be registered


@dataclass(eq=False)
class ServerSlot:
    """Everything the group holds for one server name: one record, from its first start to its last drain."""

    serving: Held | None = None  # the session calls go to (the mapping's value)
    starting: Held | None = None  # a replacement with new settings, starting beside it
    draining: list[Held] = field(default_factory=list)  # old sessions finishing their calls
    abandoned: set[McpSession] = field(default_factory=set)  # replacements that never served, closing
    skipped: str | None = None  # why the server has no session (it is disabled)
    absent: tuple[str, str] | None = None  # (namespace, hint) the registry gives while its removed session drains

    def held(self, session: McpSession) -> Held | None:
        """The record of ``session`` while it serves, starts or drains; None once it left (or was abandoned)."""
        for held in (self.serving, self.starting, *self.draining):
            if held is not None and held.session is session:
                return held
        return None

    @property
    def empty(self) -> bool:
        """Whether nothing of the server is left to remember."""
        return (
            self.serving is None
            and self.starting is None
            and not self.draining
            and not self.abandoned
            and self.skipped is None
            and self.absent is None
        )


def status_row(held: Held, role: Role) -> ServerStatus:
    """The status row of one held session, with the registration problem the group knows of."""
    session = held.session
    row = dict(vars(session.status()))
    if held.problem is not None and session.state is SessionState.READY:
        row["error"] = held.problem
    return ServerStatus(**row, in_flight=session.in_flight, role=role)
