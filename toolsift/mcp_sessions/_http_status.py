"""HTTP refusals of a Streamable HTTP server, said as what they are: "HTTP 401 Unauthorized", and what to do.

The SDK turns a non-2xx answer whose body is not a JSON-RPC error into "Server
returned an error response" (-32603), dropping the status; and one whose body
is a JSON-RPC error into that error alone, so a 401 reads like any refusal.
toolsift's ``httpx2`` client gets a response hook that puts a JSON-RPC error
in place of such an answer: it names the status, what the server asked for
(``WWW-Authenticate``), what it said, and, for 401 and 403, how to authorise.
The SDK then reports it like any error of the server. A 404 in plain text
before there is a session says the URL is not an MCP endpoint (the SDK's
"Not Found" method error, with that message; its code is kept, so what reads
it as "method not found" still does); after, it keeps its SDK meaning (the
session is gone). Other statuses with a JSON body are left to the SDK, which
reads JSON-RPC errors out of them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
import mcp.types as types

from ._http_limit import request_id_of

__all__ = ["HTTP_STATUS_KEY", "explain_http_errors"]

# ErrorData.data key holding the HTTP status, so a connect failure is described by the message alone.
HTTP_STATUS_KEY = "httpStatus"
_AUTH = (401, 403)
_SESSION_HEADER = "mcp-session-id"
_BODY_LIMIT = 64 * 1024
_SNIPPET = 200


def _advice(status: int, challenge: str | None) -> str:
    asked = f"; it asks for: {challenge}" if challenge else ""
    if status == 401 and challenge is not None and "resource_metadata" in challenge:
        return (
            f'the server wants an OAuth sign-in{asked}. Add "auth": {{}} to the server\'s config and sign '
            "in once with 'toolsift auth login <server>' (docs/configuration.md: Signing in to remote servers)"
        )
    if status == 401:
        return (
            f"the server wants authorisation{asked}. Give the server an access token in its config, "
            '"headers": {"Authorization": "Bearer ${TOKEN}"} (the value may be ${VAR} or secret://...)'
        )
    if status == 403:
        return (
            f"the server refused the credentials it was given{asked}; check the token, its scopes "
            "and the server's access rules"
        )
    return "the server failed to answer the request"


def _said(body: bytes) -> str | None:
    """What the body says, in a few words: a JSON-RPC error's message, an OAuth error, or the text itself."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data: Any = json.loads(text)
    except ValueError:
        return text[:_SNIPPET] or None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])[:_SNIPPET]
        parts = [str(data[key]) for key in ("error", "error_description") if isinstance(data.get(key), str)]
        if parts:
            return ": ".join(parts)[:_SNIPPET]
    return text[:_SNIPPET]


async def _body(response: httpx2.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.stream:  # type: ignore[union-attr]
        chunks.append(chunk)
        size += len(chunk)
        if size >= _BODY_LIMIT:
            break
    return b"".join(chunks)[:_BODY_LIMIT]


def explain_http_errors() -> Callable[[httpx2.Response], Awaitable[None]]:
    """An ``httpx2`` response hook that turns refusals into JSON-RPC errors naming the HTTP status."""

    async def hook(response: httpx2.Response) -> None:
        status = response.status_code
        if response.request.method != "POST" or status < 400:
            return
        if status == 404 and _SESSION_HEADER in response.request.headers:
            return  # the session is gone: the SDK says so
        is_json = response.headers.get("content-type", "").lower().startswith("application/json")
        if is_json and status not in _AUTH:
            return
        request_id = request_id_of(response.request)
        if request_id is None:
            return
        code = types.INTERNAL_ERROR
        if status == 404:
            code = types.METHOD_NOT_FOUND
            message = (
                f"the URL {response.request.url} answered 404 Not Found: is it an MCP endpoint? "
                "(MCP servers are usually served at a path such as /mcp)"
            )
        else:
            said = _said(await _body(response))
            message = (
                f"HTTP {status} {response.reason_phrase} from {response.request.url}: "
                f"{_advice(status, response.headers.get('www-authenticate'))}"
                f"{f' (the server said: {said})' if said else ''}"
            )
        error = types.JSONRPCError(
            jsonrpc="2.0",
            id=request_id,
            error=types.ErrorData(code=code, message=message, data={HTTP_STATUS_KEY: status}),
        )
        response.headers["content-type"] = "application/json"
        response.stream = httpx2.ByteStream(error.model_dump_json(by_alias=True, exclude_none=True).encode())

    return hook
