"""What a served call ended with when the client, not the pipeline, reads the answer.

A gateway's call runs through the pipeline like any other (approval, audit,
the rules) and comes back as a ``ToolResult``: what the pipeline saw and
audited. Some calls end with something only the client can act on: they come
back as one of the subclasses here, which carries it, and the server matches
them once where it answers the client. Pipeline stages copy results
(``model_copy``), so an outcome keeps its kind on the way out.
"""

from __future__ import annotations

from typing import Any, final

import mcp.types as types
from mcp import MCPError

from ..registry import ToolResult

__all__ = ["CapabilityMissing", "ClaimedResult", "HandedTask", "InputRequired"]


@final
class InputRequired(ToolResult):
    """The call waits for the client's input: ``request`` (the approval's question, or the upstream
    server's) is the answer, and the client calls again with its responses and the request state."""

    request: types.InputRequiredResult

    @classmethod
    def asking(cls, request: types.InputRequiredResult, text: str, *, is_error: bool = False) -> InputRequired:
        """``request`` for the client; ``text`` is what the pipeline sees meanwhile."""
        return cls(content=[types.TextContent(text=text)], is_error=is_error, request=request)


@final
class HandedTask(ToolResult):
    """The upstream server runs a handshake-era client's call as a task the client follows itself.

    Attributes:
        server: The upstream server.
        tool: The tool's name on that server.
        created: The server's ``CreateTaskResult`` (wire form, secrets masked).
    """

    server: str
    tool: str
    created: dict[str, Any]


@final
class ClaimedResult(ToolResult):
    """The upstream server answered a 2026-07-28 client with a result of an extension it declared (a task).

    Attributes:
        server: The upstream server.
        tool: The tool's name on that server.
        wire: The result as it came (secrets masked), for the client to read.
    """

    server: str
    tool: str
    wire: dict[str, Any]


@final
class CapabilityMissing(ToolResult):
    """The upstream server refused the call for want of a capability the client did not declare (``-32021``).

    Only the client can act on that, so it gets the server's ``refusal`` itself.
    """

    refusal: MCPError
