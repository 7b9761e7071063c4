"""The status table: one row per session, and the same rows as plain text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, final

from ._state import SessionStatus

if TYPE_CHECKING:
    from ._session import McpSession

__all__ = ["ROLE_ORDER", "Role", "ServerStatus", "format_status", "status_rows"]

Role = Literal["serving", "starting", "draining"]
ROLE_ORDER: dict[Role, int] = {"serving": 0, "starting": 1, "draining": 2}


@final
@dataclass(frozen=True)
class ServerStatus(SessionStatus):
    """A session's row in ``McpSessionGroup.status()`` (and ``McpServerManager.status()``).

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


def status_rows(sessions: Mapping[str, McpSession] | Iterable[McpSession]) -> list[SessionStatus]:
    """The status table of some sessions, one row each, by server name."""
    values = sessions.values() if isinstance(sessions, Mapping) else sessions
    return sorted((s.status() for s in values), key=lambda row: row.server)


def format_status(rows: Iterable[SessionStatus]) -> str:
    """The rows as a plain-text table (server, transport, visibility, state, tools, error)."""
    header = ("server", "transport", "visibility", "state", "tools", "error")
    table = [header, *((r.server, r.transport, r.visibility, r.state.value, str(r.tools), r.error or "") for r in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    return "\n".join(
        ("  ".join(cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)) + "  " + row[-1]).rstrip()
        for row in table
    )
