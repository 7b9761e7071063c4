"""A gateway client's part in a call to an upstream server, carried there and back: a 2026-07-28 client's
questions and answers (``InputExchange``), a 2025-11-25 client's request for a task (``TaskCall``).

Shared by ``mcp_sessions`` (which calls the server) and ``serve`` (which
answers its client); users never build one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp.types as types
from mcp import MCPError

__all__ = ["InputExchange", "MidCallAnswers", "TaskCall"]


@dataclass(frozen=True)
class MidCallAnswers:
    """A handshake-era client's call through a gateway: it answers the server's questions mid-call (an extension).

    Where a session keeps a handshake-era connection beside a 2026-07-28 one, such
    a call goes over it, so that a server written against the classic API may ask
    from inside the tool, as the client expects.
    """


@dataclass
class InputExchange:
    """One call's exchange with the upstream server on the client's behalf (a call-record extension).

    Attributes:
        responses: The client's answers to the server's previous question (``inputResponses``), if any.
        request_state: The server's state from that question, echoed by the client, if any.
        capabilities: What the client declared for this request (wire form), sent to the server in
            place of the gateway's own, so that the server decides by the client that will read the
            answer (its questions, its extensions, such as tasks); None sends the gateway's.
        pending: Set by the call when the server asks again: the ``InputRequiredResult`` to return to the client.
        claimed: Set by the call when the server answers with a result shape of an extension the client
            declared (a task's ``CreateTaskResult``): the wire result, to return to the client.
        refused: Set by the call when the server refuses it for want of a capability the client did not
            declare (``-32021``): only the client can act on that, so it gets the error itself.
    """

    responses: types.InputResponses | None = None
    request_state: str | None = None
    capabilities: dict[str, Any] | None = None
    pending: types.InputRequiredResult | None = None
    claimed: dict[str, Any] | None = None
    refused: MCPError | None = None


@dataclass
class TaskCall:
    """A handshake-era client's request that its gateway call run as a task of the upstream server (a call-record
    extension; MCP 2025-11-25's ``task`` param of ``tools/call``).

    Attributes:
        task: The ``task`` params as the client sent them (``ttl``), passed to the server.
        created: Set by the call when the server made the task: its ``CreateTaskResult`` (wire form), for the
            gateway to return to the client under an id of its own.
    """

    task: dict[str, Any]
    created: dict[str, Any] | None = None
