"""A request sent to a server as another client's own: stamped as the session would, its capabilities declared.

A gateway passes its client's requests on (the methods of an extension the
SDK has no call for, a tool call whose answer the client reads): the server
must decide by what that client declared, not by what the session would. The
SDK stamps the session's capabilities on every request; here the client's
replace them, and the request goes through the session's raw path, so that a
result of an extension's shape, which the SDK's typed calls refuse, comes
back as it came.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Mapping
from typing import Any, cast

import mcp.types as types
from mcp import Client
from mcp.shared.dispatcher import CallOptions, ProgressFnT
from mcp.shared.inbound import MCP_NAME_HEADER, encode_header_value
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from mcp_types import CLIENT_CAPABILITIES_META_KEY
from pydantic import BaseModel, ConfigDict

from ..registry._internal import ProgressCallback

__all__ = ["extension_request", "send_as_client"]


class _RawResult(BaseModel):
    """An extension's result, kept whole: the SDK knows no model for it."""

    model_config = ConfigDict(extra="allow")


async def extension_request(
    client: Client, server: str, extension: str, method: str, params: Mapping[str, Any]
) -> dict[str, Any]:
    """Send a request of an extension ``server`` declared (the SDK has no method for it); the raw result.

    Args:
        extension: The extension's identifier (``io.modelcontextprotocol/skills``).
        method: The request's method (``skills/list``).
        params: Its params.

    Raises:
        LookupError: On a 2026-07-28 connection, the server does not declare ``extension`` (it must
            not be asked). A 2025-11-25 handshake carries no extensions, so there it is asked, and a
            server without the extension answers ``-32601`` (method not found).
        MCPError: The server refused.
    """
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS and extension not in (
        client.server_capabilities.extensions or {}
    ):
        raise LookupError(f"MCP server {server!r} does not declare the extension {extension!r}")
    request = types.Request[dict[str, Any], str](method=method, params=dict(params))
    result = await client.session.send_request(request, _RawResult)
    return dict(result.model_extra or {})


def send_as_client(
    client: Client,
    method: str,
    params: dict[str, Any],
    capabilities: dict[str, Any] | None,
    *,
    name: str | None = None,
    seconds: float | None = None,
    progress: ProgressCallback | None = None,
) -> Awaitable[dict[str, Any]]:
    """Send one request stamped as ``client``'s session would, with ``capabilities`` declared in its place.

    Not a coroutine: it stamps the request and returns the SDK's sending of it, to be awaited, so that
    it adds no frame to the call it makes.

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
    return session._dispatcher.send_raw_request(method, data["params"], opts)
