"""A client's request passed to an upstream server in the client's own era, and what came back, as it came.

An upstream server of MCP 2026-07-28 asks for elicitation, sampling or roots
by returning ``InputRequiredResult``; the SDK's ``Client`` would answer it
through the session's callbacks, but the question belongs to the gateway's
client, which answers it on a retry of its own. So a 2026-07-28 client's
request carries an :class:`InputExchange`: what its retry brought goes to the
server unchanged, and the server's next question is returned to the client as
it came (the gateway's own request-state boundary seals the server's
``requestState`` on the way out and opens it on the way back). The server is
told what the client declared, not what the gateway would: the client reads
the answer, which may be of an extension's shape (a task).

A handshake-era client is not given one: the server's questions reach it
mid-call through the relay instead, so its requests go to the upstream server
in the handshake era wherever the session keeps a connection of that era
beside a 2026-07-28 one (``Era``): the two eras are mirrored upstream, each
client reaching the server in its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import mcp.types as types
from mcp import Client
from mcp.server.context import ServerRequestContext
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from ..mcp_sessions import McpSession
from ..mcp_sessions._internal import Era, send_as_client
from ._approval import APPROVAL_INPUT
from ._tasks import declared_capabilities

__all__ = ["InputExchange", "asked", "client_era", "input_exchange", "is_modern", "request_as_client"]

R = TypeVar("R", bound=BaseModel)
Params = types.CallToolRequestParams | types.GetPromptRequestParams | types.ReadResourceRequestParams


@dataclass(frozen=True, slots=True)
class InputExchange:
    """What a 2026-07-28 client's request brings for the upstream server.

    Attributes:
        responses: The client's answers to the server's previous question (``inputResponses``), if any.
        request_state: The server's state from that question, echoed by the client, if any.
        capabilities: What the client declared for this request (wire form), sent to the server in
            place of the gateway's own, so that the server decides by the client that will read the
            answer (its questions, its extensions, such as tasks).
    """

    responses: types.InputResponses | None
    request_state: str | None
    capabilities: dict[str, Any]

    def wire(self, params: Params) -> dict[str, Any]:
        """``params`` as the server gets them (wire form): with this exchange's answers and state, or none."""
        answered = params.model_copy(update={"input_responses": self.responses, "request_state": self.request_state})
        return answered.model_dump(by_alias=True, mode="json", exclude_none=True)


def is_modern(client: Client) -> bool:
    """Whether ``client``'s connection speaks MCP 2026-07-28 (or later): the only era an exchange travels in."""
    return client.protocol_version in MODERN_PROTOCOL_VERSIONS


def client_era(ctx: ServerRequestContext[Any]) -> Era:
    """The era of the connection a request goes upstream over: the era of the client that made it."""
    return "modern" if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS else "handshake"


def input_exchange(ctx: ServerRequestContext[Any], params: Params) -> InputExchange | None:
    """The input exchange of a request to an upstream server, for a 2026-07-28 client; None for older ones.

    The requests a server may answer with ``InputRequiredResult``: ``tools/call``,
    ``prompts/get`` and ``resources/read``.

    A retry that answers the gateway's own approval question carries the
    gateway's state, not the server's: the server has asked nothing yet, so
    it gets neither the answers nor the state.
    """
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return None
    capabilities = declared_capabilities(ctx)
    responses = params.input_responses or {}
    if APPROVAL_INPUT in responses:
        return InputExchange(None, None, capabilities)
    return InputExchange(responses or None, params.request_state, capabilities)


def asked(raw: dict[str, Any]) -> types.InputRequiredResult | None:
    """The server's question when ``raw`` is one (``resultType: input_required``), else None."""
    if raw.get("resultType") != "input_required":
        return None
    return types.InputRequiredResult.model_validate(raw, by_name=False)


async def request_as_client(
    session: McpSession,
    ctx: ServerRequestContext[Any],
    method: str,
    params: Params,
    plain: Callable[[Client], Awaitable[R]],
    parsed: type[R],
    empty: R,
) -> R | types.InputRequiredResult:
    """``prompts/get`` or ``resources/read`` for the client of ``ctx``, in its era; the server's question, if it asks.

    A handshake-era client's request, or one that reaches a server of that era, goes as ``plain``
    sends it over the connection; a 2026-07-28 client's carries its exchange, and a result of an
    extension's shape, which the client did not ask of a prompt or a resource, reads as ``empty``.

    Raises:
        ServerDraining: The session is draining.
        ServerUnavailable: The session is not ready.
        MCPError: The server refused.
    """
    exchange = input_exchange(ctx, params)
    client = await session.client(client_era(ctx))
    if exchange is None or not is_modern(client):
        return await plain(client)
    raw = await send_as_client(client, method, exchange.wire(params), exchange.capabilities)
    question = asked(raw)
    if question is not None:
        return question
    return parsed.model_validate(raw, by_name=False) if raw.get("resultType", "complete") == "complete" else empty
