"""An upstream server's ``InputRequiredResult``, passed to the client that made the call instead of answered here.

On MCP 2026-07-28 a server asks for elicitation, sampling or roots by
returning ``InputRequiredResult`` (the input requests and an opaque
``requestState``); the caller retries the call with the answers
(``inputResponses``) and the state. The SDK's ``Client.call_tool`` runs that
loop itself, answering through the session's callbacks. A gateway serving a
2026-07-28 client must not: the question belongs to its client, which answers
it on a retry of its own. So such a call carries an :class:`InputExchange`:
what the client's retry brought goes to the server unchanged, and the server's
next question comes back in ``pending`` for the gateway to return as its own
result. The state stays the server's, opaque to the gateway.
"""

from __future__ import annotations

import math
from typing import cast

import mcp.types as types
from mcp import Client
from mcp.shared.dispatcher import ProgressFnT

from .._input_exchange import InputExchange
from ..registry import ProgressCallback

__all__ = ["call_passing_input", "get_prompt_passing_input", "read_resource_passing_input"]

# What the call's pipeline sees while the question travels to the client; the client sees the question.
_ASKED = "The MCP server asked the calling client for input; the call goes on when the client answers."


async def call_passing_input(
    client: Client,
    name: str,
    arguments: dict[str, object] | None,
    exchange: InputExchange,
    *,
    seconds: float | None,
    progress: ProgressCallback | None,
) -> types.CallToolResult:
    """Call ``name`` once, handing an ``InputRequiredResult`` to ``exchange`` rather than answering it.

    Only 2026-07-28 connections carry the exchange; a handshake-era server asks mid-call instead.
    """
    raw = await client.session.call_tool(
        name,
        arguments,
        read_timeout_seconds=seconds if seconds is not None else math.inf,
        progress_callback=cast("ProgressFnT", progress),
        input_responses=exchange.responses,
        request_state=exchange.request_state,
        allow_input_required=True,
    )
    if isinstance(raw, types.InputRequiredResult):
        exchange.pending = raw
        return types.CallToolResult(content=[types.TextContent(text=_ASKED)])
    return raw


async def get_prompt_passing_input(
    client: Client, name: str, arguments: dict[str, str] | None, exchange: InputExchange
) -> types.GetPromptResult:
    """Render prompt ``name`` once, handing an ``InputRequiredResult`` to ``exchange`` rather than answering it."""
    raw = await client.session.get_prompt(
        name,
        arguments,
        input_responses=exchange.responses,
        request_state=exchange.request_state,
        allow_input_required=True,
    )
    if isinstance(raw, types.InputRequiredResult):
        exchange.pending = raw
        return types.GetPromptResult(messages=[])
    return raw


async def read_resource_passing_input(client: Client, uri: str, exchange: InputExchange) -> types.ReadResourceResult:
    """Read resource ``uri`` once, handing an ``InputRequiredResult`` to ``exchange`` rather than answering it."""
    raw = await client.session.read_resource(
        uri, input_responses=exchange.responses, request_state=exchange.request_state, allow_input_required=True
    )
    if isinstance(raw, types.InputRequiredResult):
        exchange.pending = raw
        return types.ReadResourceResult(contents=[])
    return raw
