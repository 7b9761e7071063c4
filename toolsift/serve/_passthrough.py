"""What a 2026-07-28 client's call carries to the upstream server through the gateway, and back.

An upstream server of MCP 2026-07-28 asks for elicitation, sampling or roots
by returning ``InputRequiredResult``; the gateway returns it to its client as
it came (the gateway's own request-state boundary seals the server's
``requestState`` on the way out and opens it on the way back), and the
client's retry brings ``inputResponses`` and that state to the server. A
handshake-era client is not given one: the server's questions reach it
mid-call through the relay instead, so its requests go to the upstream
server in the handshake era wherever the session keeps a connection of that
era beside a 2026-07-28 one (``MidCallAnswers``): the two eras are mirrored
upstream, each client reaching the server in its own.
"""

from __future__ import annotations

from typing import Any

import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from .._input_exchange import InputExchange, MidCallAnswers
from ._approval import APPROVAL_INPUT
from ._tasks import declared_capabilities

__all__ = ["answers_mid_call", "era_extensions", "input_exchange"]


def input_exchange(
    ctx: ServerRequestContext[Any],
    params: types.CallToolRequestParams | types.GetPromptRequestParams | types.ReadResourceRequestParams,
) -> InputExchange | None:
    """The input exchange of a request to an upstream server, for a 2026-07-28 client; None for older ones.

    The requests a server may answer with ``InputRequiredResult``: ``tools/call``,
    ``prompts/get`` and ``resources/read``.

    A retry that answers the gateway's own approval question carries the
    gateway's state, not the server's: the server has asked nothing yet, so
    it gets neither the answers nor the state.

    The server is told what the client declared, not what the gateway would:
    the client reads the answer.
    """
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return None
    capabilities = declared_capabilities(ctx)
    responses = params.input_responses or {}
    if APPROVAL_INPUT in responses:
        return InputExchange(capabilities=capabilities)
    return InputExchange(responses=responses or None, request_state=params.request_state, capabilities=capabilities)


def answers_mid_call(ctx: ServerRequestContext[Any]) -> bool:
    """Whether the request's client answers the server's questions mid-request: a handshake-era client does."""
    return ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS


def era_extensions(ctx: ServerRequestContext[Any]) -> tuple[object, ...]:
    """The call-record extensions that tell an upstream call the calling client's era (see ``answers_mid_call``)."""
    return (MidCallAnswers(),) if answers_mid_call(ctx) else ()
