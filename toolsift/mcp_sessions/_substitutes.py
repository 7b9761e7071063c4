"""The JSON-RPC errors toolsift's transports answer a request with, in the server's place.

Two things end a request before the server's answer can reach the caller:
an answer over the server's ``maxResultBytes``, dropped as it arrives (the
stdio reader of ``_framing``, the HTTP response hook of ``_http_limit``), and a
request that cannot be put on the wire at all (``_stdio``: arguments that are
not valid Unicode). The request then gets one of these errors, so the SDK
ends the call the usual way, and the session tells them from errors the
server sent by their code and ``data``.
"""

from __future__ import annotations

from typing import Any

import mcp.types as types
from mcp import MCPError

__all__ = ["RESULT_TOO_LARGE", "not_sent_error", "not_sent_reason", "too_large_error", "too_large_sizes"]

# In the range JSON-RPC leaves to implementations, away from the codes the SDK uses (-32000, -32001, -32021).
RESULT_TOO_LARGE = -32050
NOT_SENT = -32051
_TOO_LARGE_KIND = "toolsift.result_too_large"
_NOT_SENT_KIND = "toolsift.not_sent"


def too_large_error(request_id: types.RequestId, size: int, limit: int) -> types.JSONRPCError:
    """The error that replaces the ``size``-byte answer to request ``request_id``."""
    error = types.ErrorData(
        code=RESULT_TOO_LARGE,
        message=f"the answer was {size} bytes, over the limit of {limit} bytes",
        data={"kind": _TOO_LARGE_KIND, "size": size, "limit": limit},
    )
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


def not_sent_error(request_id: types.RequestId, reason: str) -> types.JSONRPCError:
    """The error for request ``request_id``, which could not be sent for ``reason``."""
    error = types.ErrorData(
        code=NOT_SENT, message=f"not sent: {reason}", data={"kind": _NOT_SENT_KIND, "reason": reason}
    )
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


def _data(error: MCPError, code: int, kind: str) -> dict[str, Any] | None:
    data: Any = error.error.data
    return data if error.code == code and isinstance(data, dict) and data.get("kind") == kind else None


def too_large_sizes(error: MCPError) -> tuple[int, int] | None:
    """``(size, limit)`` when ``error`` came from :func:`too_large_error`, else None."""
    data = _data(error, RESULT_TOO_LARGE, _TOO_LARGE_KIND)
    if data is None or not isinstance(data.get("size"), int) or not isinstance(data.get("limit"), int):
        return None
    return data["size"], data["limit"]


def not_sent_reason(error: MCPError) -> str | None:
    """Why the request was not sent, when ``error`` came from :func:`not_sent_error`, else None."""
    data = _data(error, NOT_SENT, _NOT_SENT_KIND)
    return str(data.get("reason")) if data is not None else None
