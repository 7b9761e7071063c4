"""How a caller may have a session send its tool call: over a connection of its era, in its own way.

A session's calls go out as the session's own (``Client.call_tool``, or a task
where the tool runs only as one). A gateway calls for a client of its own,
which may speak another MCP era and read the answer itself (a question of the
server's, a task it follows): such a caller names its ``Era`` and brings a
``Sender``. The session still supervises the call (the held tools, the time
limit, cancellation, masking, failures); what the sender returns is what
happened, a result or something the caller reads (see ``toolsift.serve``).
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

import mcp.types as types
from mcp import Client

from ..registry import ToolResult
from ..registry._internal import ProgressCallback

__all__ = ["Era", "Sender"]

#: The connection a caller's request goes over: ``modern`` keeps it on the session's own (a 2026-07-28
#: caller, answering the server's questions on a retry); ``handshake`` takes the handshake-era connection
#: kept beside it where there is one (a caller that answers questions mid-call).
Era = Literal["modern", "handshake"]


class Sender(Protocol):
    """A caller's own way of sending one tool call over the connection the session chose."""

    def sends_over(self, client: Client) -> bool:
        """Whether it sends over ``client`` (a connection of an era it speaks); else the session sends as usual."""
        ...

    async def __call__(
        self,
        client: Client,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        seconds: float | None,
        progress: ProgressCallback | None,
    ) -> types.CallToolResult | ToolResult:
        """Send the call: the server's result, or what it ended with for the caller to read (a ``ToolResult``).

        Raises:
            MCPError: The server answered with an error.
        """
        ...
