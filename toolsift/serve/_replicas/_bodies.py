"""What a request to a replica carries, read before any replica serves it: where it must go, and what it may run.

A POST on a session may hold the client's answers to server requests (which
may belong to another replica), ``tools/call`` requests (kept with their
priming events so that a lost call can run again) or anything else. The body
is read once and given again to the SDK's transport.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pydantic_core
from mcp_types import (
    INVALID_REQUEST,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

__all__ = ["buffered", "error_response", "json_of", "oversized_batch", "routed", "status_of", "tool_calls"]


def error_response(message: str, status: int) -> Response:
    body = JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=INVALID_REQUEST, message=message))
    return Response(
        body.model_dump_json(by_alias=True, exclude_unset=True), status_code=status, media_type="application/json"
    )


async def buffered(receive: Receive) -> tuple[bytes, Receive]:
    """The whole request body, and a ``receive`` that gives it again (then the original's messages)."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    replayed = False

    async def again() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, again


def json_of(body: bytes) -> Any:
    """The body's JSON; None when it is not JSON, or nested too deep (the SDK's transport answers that, 400).

    Read with the parser the SDK's transport uses, whose nesting limit keeps
    a hostile body from exhausting the stack.
    """
    try:
        return pydantic_core.from_json(body)
    except ValueError:
        return None


def tool_calls(data: Any) -> dict[str, str]:
    """The body's ``tools/call`` requests, as JSON by stream id (the request id as text)."""
    items = data if isinstance(data, list) else [data]
    return {
        str(item["id"]): json.dumps(item)
        for item in items
        if isinstance(item, dict) and item.get("method") == "tools/call" and item.get("id") is not None
    }


def routed(data: Any) -> list[dict[str, Any]] | None:
    """The body's messages when each concerns a request some replica holds, and nothing else is in it.

    Those are the client's answers to the server's requests, and its cancellations of its own requests:
    either may reach a replica other than the one holding that request.
    """
    if data is None:
        return None
    items = data if isinstance(data, list) else [data]
    if not items or not all(isinstance(item, dict) for item in items):
        return None
    try:
        parsed = [jsonrpc_message_adapter.validate_python(item, by_name=False) for item in items]
    except ValidationError:
        return None  # the SDK's transport answers malformed bodies
    routed = all(
        isinstance(message, JSONRPCResponse | JSONRPCError)
        or (isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled")
        for message in parsed
    )
    return items if routed else None


async def status_of(
    app: Callable[[Scope, Receive, Send], Any], scope: Scope, receive: Receive, send: Send
) -> int | None:
    status: int | None = None

    async def watch(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        await send(message)

    await app(scope, receive, watch)
    return status


def oversized_batch(data: Any, limit: int) -> Response | None:
    """The 413 for a batch of more than ``limit`` messages (``serve.shared.maxBatchMessages``); None: not one."""
    if not isinstance(data, list) or len(data) <= limit:
        return None
    return error_response(
        f"A POST body may carry at most {limit} JSON-RPC messages (serve.shared.maxBatchMessages); "
        f"this one carries {len(data)}",
        413,
    )
