"""A gateway client's request, sent to the upstream server as the client's own and answered as it came.

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

The server also decides by what the client declared: whether it may ask at
all, and which extensions' results it may answer with (a task instead of the
tool's result). The SDK stamps the session's capabilities on every request;
here the client's replace them, so each request is sent through the
session's raw path after the same stamp (as ``_tasks`` does), and a result
of an extension's shape, which the SDK's typed calls refuse, comes back in
``claimed`` as it came.
"""

from __future__ import annotations

import math
from typing import Any, cast

import mcp.types as types
from mcp import Client, MCPError
from mcp.shared.dispatcher import CallOptions, ProgressFnT
from mcp.shared.inbound import MCP_NAME_HEADER, encode_header_value
from mcp_types import CLIENT_CAPABILITIES_META_KEY

from .._input_exchange import InputExchange
from ..registry._internal import ProgressCallback

__all__ = ["call_passing_input", "get_prompt_passing_input", "read_resource_passing_input", "send_as_client"]

# What the call's pipeline sees while the question travels to the client; the client sees the question.
_ASKED = "The MCP server asked the calling client for input; the call goes on when the client answers."
# What it sees when the server answered with an extension's result (a task): the client reads that result.
_CLAIMED = "The MCP server answered with a {kind!r} result, passed to the calling client as it came."


async def send_as_client(
    client: Client,
    method: str,
    params: dict[str, Any],
    capabilities: dict[str, Any] | None,
    *,
    name: str | None = None,
    seconds: float | None = None,
    progress: ProgressCallback | None = None,
) -> dict[str, Any]:
    """Send one request stamped as ``client``'s session would, with ``capabilities`` declared in its place.

    Args:
        capabilities: The capabilities to declare (wire form); None keeps the session's.
        name: The ``Mcp-Name`` header, for methods the SDK does not name (an extension's).
        seconds: Read timeout; None waits as long as the server works.

    Returns:
        The result as the server sent it.

    Raises:
        MCPError: The server answered with an error.
    """
    session = client.session
    data: dict[str, Any] = {"method": method, "params": dict(params)}
    opts: CallOptions = {}
    session._stamp(data, opts)
    meta = data["params"].get("_meta")
    if capabilities is not None and isinstance(meta, dict) and CLIENT_CAPABILITIES_META_KEY in meta:
        meta[CLIENT_CAPABILITIES_META_KEY] = capabilities  # only a 2026-07-28 stamp declares them per request
    if name is not None:
        opts.setdefault("headers", {})[MCP_NAME_HEADER] = encode_header_value(name)
    opts["timeout"] = seconds if seconds is not None else math.inf
    if progress is not None:
        opts["on_progress"] = cast("ProgressFnT", progress)  # the SDK calls it positionally, as promised
    return await session._dispatcher.send_raw_request(method, data["params"], opts)


async def _exchange(
    client: Client,
    method: str,
    params: types.CallToolRequestParams | types.GetPromptRequestParams | types.ReadResourceRequestParams,
    exchange: InputExchange,
    *,
    seconds: float | None = None,
    progress: ProgressCallback | None = None,
) -> dict[str, Any] | None:
    """Send ``method`` with the exchange's answers; the complete result, or None when the client must read it.

    None means ``exchange.pending`` (the server asks) or ``exchange.claimed`` (an extension's result) is set.
    """
    answered = params.model_copy(
        update={"input_responses": exchange.responses, "request_state": exchange.request_state}
    )
    wire = answered.model_dump(by_alias=True, mode="json", exclude_none=True)
    try:
        raw = await send_as_client(client, method, wire, exchange.capabilities, seconds=seconds, progress=progress)
    except MCPError as exc:
        if exc.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY and exchange.capabilities is not None:
            exchange.refused = exc
        raise
    kind = raw.get("resultType", "complete")
    if kind == "input_required":
        exchange.pending = types.InputRequiredResult.model_validate(raw, by_name=False)
        return None
    if kind != "complete":
        exchange.claimed = raw
        return None
    return raw


async def call_passing_input(
    client: Client,
    name: str,
    arguments: dict[str, object] | None,
    exchange: InputExchange,
    *,
    seconds: float | None,
    progress: ProgressCallback | None,
) -> types.CallToolResult:
    """Call ``name`` once as the exchange's client, handing a question or an extension's result to ``exchange``.

    Only 2026-07-28 connections carry the exchange; a handshake-era server asks mid-call instead.
    """
    params = types.CallToolRequestParams(name=name, arguments=arguments)
    raw = await _exchange(client, "tools/call", params, exchange, seconds=seconds, progress=progress)
    if raw is None:
        text = (
            _ASKED if exchange.pending is not None else _CLAIMED.format(kind=(exchange.claimed or {}).get("resultType"))
        )
        return types.CallToolResult(content=[types.TextContent(text=text)])
    result = types.CallToolResult.model_validate(raw, by_name=False)
    if not result.is_error:
        await client.session.validate_tool_result(name, result)
    return result


async def get_prompt_passing_input(
    client: Client, name: str, arguments: dict[str, str] | None, exchange: InputExchange
) -> types.GetPromptResult:
    """Render prompt ``name`` once as the exchange's client, handing a question to ``exchange``."""
    params = types.GetPromptRequestParams(name=name, arguments=arguments)
    raw = await _exchange(client, "prompts/get", params, exchange)
    return (
        types.GetPromptResult(messages=[]) if raw is None else types.GetPromptResult.model_validate(raw, by_name=False)
    )


async def read_resource_passing_input(client: Client, uri: str, exchange: InputExchange) -> types.ReadResourceResult:
    """Read resource ``uri`` once as the exchange's client, handing a question to ``exchange``."""
    raw = await _exchange(client, "resources/read", types.ReadResourceRequestParams(uri=uri), exchange)
    return (
        types.ReadResourceResult(contents=[])
        if raw is None
        else types.ReadResourceResult.model_validate(raw, by_name=False)
    )
