"""Turning what goes wrong with a server into words: failed calls and failed connections.

A call that fails becomes a ``ToolResult`` with ``is_error=True`` whose first
text block is toolsift's own explanation (server, tool, what happened, what
happens next). When the server said something itself (a JSON-RPC error
message), its words follow in a second block, so that the untrusted-content
guard can fence them without fencing ours: ``meta["mcp_failure"]`` holds the
kind of failure and marks the result as built here.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

import httpx2
import mcp.types as types
from mcp import MCPError
from mcp.client.auth.exceptions import OAuthFlowError

from .._exceptions import ToolsiftError
from ..config import HttpServer, ServerConfig, StdioServer
from ..registry import ToolResult
from ._http_status import HTTP_STATUS_KEY

__all__ = [
    "FAILURE_KEY",
    "CallFailure",
    "cancelled_result",
    "crash_result",
    "describe_exception",
    "failure_result",
    "invalid_result",
    "not_sent_result",
    "rpc_error_result",
    "timeout_result",
    "too_large_result",
]

FAILURE_KEY = "mcp_failure"
_MAX_SERVER_TEXT = 500
_CODE_NAMES = {
    types.PARSE_ERROR: "parse error",
    types.INVALID_REQUEST: "invalid request",
    types.METHOD_NOT_FOUND: "method not found",
    types.INVALID_PARAMS: "invalid params",
    types.INTERNAL_ERROR: "internal error",
}


class CallFailure(StrEnum):
    """Why a call returned an error result that the server did not produce."""

    TIMEOUT = "timeout"  # no answer within the call's timeout; the server was told to cancel
    CRASH = "crash"  # the connection closed while the call waited: the server exited or dropped it
    RPC_ERROR = "rpc_error"  # the server answered with a JSON-RPC error instead of an isError result
    INVALID_RESULT = "invalid_result"  # the answer did not fit the protocol or the tool's outputSchema
    CANCELLED = "cancelled"  # the session was closed or drained while the call ran
    TOO_LARGE = "too_large"  # the answer was over the server's maxResultBytes and was dropped as it arrived
    NOT_SENT = "not_sent"  # the request could not be put on the wire (arguments that are not valid Unicode)
    ASKED_MID_CALL = "asked_mid_call"  # a tool asked mid-call over 2026-07-28 and was not safe to run again


def failure_result(kind: CallFailure, text: str, server_text: str | None = None) -> ToolResult:
    """An error result with toolsift's explanation and, separately, the server's own words."""
    content: list[types.ContentBlock] = [types.TextContent(text=text)]
    if server_text:
        if len(server_text) > _MAX_SERVER_TEXT:
            server_text = server_text[:_MAX_SERVER_TEXT] + f"... [{len(server_text)} chars]"
        content.append(types.TextContent(text=server_text))
    return ToolResult(content=content, is_error=True, meta={FAILURE_KEY: kind.value})


def rpc_error_result(server: str, tool: str, error: MCPError, redact: Callable[[str], str]) -> ToolResult:
    """The result for a tool call the server answered with a JSON-RPC error (secrets masked before it is cut)."""
    name = _CODE_NAMES.get(error.code)
    code = f"{error.code} ({name})" if name else str(error.code)
    return failure_result(
        CallFailure.RPC_ERROR,
        f"MCP server {server!r} failed tool {tool!r} with JSON-RPC error {code} instead of a tool result; "
        "the server's message follows.",
        redact(error.message),
    )


def too_large_result(server: str, tool: str, size: int, limit: int) -> ToolResult:
    """The result for an answer dropped as it arrived because it was over ``maxResultBytes``."""
    return failure_result(
        CallFailure.TOO_LARGE,
        f"Tool {tool!r} of MCP server {server!r} returned {size:,} bytes, "
        f"over the server's limit of {limit:,} bytes (maxResultBytes); the result was dropped. "
        "Ask for less (a narrower query, a page, a summary).",
    )


def not_sent_result(server: str, tool: str, reason: str) -> ToolResult:
    """The result for a call that could not be sent to the server at all."""
    return failure_result(
        CallFailure.NOT_SENT, f"Tool {tool!r} of MCP server {server!r} was not called: the request {reason}."
    )


def timeout_result(server: str, tool: str, seconds: float | None) -> ToolResult:
    """The result for a call the server did not answer in time."""
    within = f" within {seconds:g}s" if seconds is not None else ""
    return failure_result(
        CallFailure.TIMEOUT,
        f"Tool {tool!r} of MCP server {server!r} did not answer{within}; the server was told to cancel it.",
    )


def crash_result(server: str, tool: str, *, stdio: bool, plan: str) -> ToolResult:
    """The result for a call whose connection closed before the answer came; ``plan`` says what happens next."""
    what = (
        f"crashed during tool {tool!r}"
        if stdio
        else f"dropped the connection during tool {tool!r} (it stopped or the network failed)"
    )
    return failure_result(
        CallFailure.CRASH, f"MCP server {server!r} {what}: the connection closed before it answered; {plan}."
    )


def cancelled_result(server: str, tool: str, why: str) -> ToolResult:
    """The result for a call the session cancelled because it was closed or drained."""
    return failure_result(
        CallFailure.CANCELLED, f"Tool {tool!r} of MCP server {server!r} was cancelled while it ran: {why}."
    )


def asked_mid_call_result(server: str, tool: str) -> ToolResult:
    """The result for a call refused over 2026-07-28 because its tool asked mid-call, and not safe to run again."""
    return failure_result(
        CallFailure.ASKED_MID_CALL,
        f"Tool {tool!r} of MCP server {server!r} asked a question in the middle of the call, which a 2026-07-28 "
        "connection cannot carry, so the server stopped it there. It was not run again: it is neither read-only nor "
        "idempotent, and it may have acted before it asked. The server's next calls use the handshake era, where "
        "it can ask: call it again (or set this server's protocol to legacy).",
    )


def invalid_result(server: str, tool: str, error: Exception, redact: Callable[[str], str]) -> ToolResult:
    """The result for an answer that did not fit the protocol or the tool's outputSchema."""
    return failure_result(
        CallFailure.INVALID_RESULT,
        f"MCP server {server!r} returned an answer to tool {tool!r} that could not be used: {type(error).__name__}",
        redact(str(error)),
    )


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def describe_exception(
    exc: BaseException, *, server: ServerConfig | None, redact: Callable[[str], str], handshake: bool = False
) -> str:
    """One line that says why a connection failed, with secrets masked.

    Exception groups (the SDK wraps everything that leaves ``async with Client``
    twice) are unwrapped to the first real cause.

    Args:
        exc: What was raised.
        server: The server's config, whose command (unresolved) "not found" errors name, and whose URL
            (unresolved) connection errors name.
        redact: Masks resolved secrets.
        handshake: It ended the connect, before the server was ready: a "method not found" then means
            the other end is not an MCP server at all (``cat`` answers so).
    """
    leaves = _leaves(exc)
    leaf = next((e for e in leaves if not isinstance(e, MCPError)), leaves[0]) if len(leaves) > 1 else leaves[0]
    if isinstance(leaf, MCPError):
        if leaf.code == types.CONNECTION_CLOSED:
            text = "the connection closed (the server exited or dropped it)"
        elif leaf.code == types.REQUEST_TIMEOUT:
            text = "the server did not answer in time"
        elif isinstance(leaf.error.data, dict) and HTTP_STATUS_KEY in leaf.error.data:
            text = leaf.message  # "HTTP 401 Unauthorized from ...: ..." says it all
        elif handshake and leaf.code == types.METHOD_NOT_FOUND:
            other = "URL" if isinstance(server, HttpServer) else "program"
            text = (
                f"the {other} did not answer the MCP handshake: is it an MCP server? "
                f"(it answered: JSON-RPC error {leaf.code}: {leaf.message})"
            )
        else:
            text = f"JSON-RPC error {leaf.code}: {leaf.message}"
    elif isinstance(leaf, FileNotFoundError) and isinstance(server, StdioServer):
        text = f"command {server.command!r} was not found"
    elif isinstance(leaf, httpx2.HTTPError) and isinstance(server, HttpServer):
        text = f"cannot reach {server.url!r}: {type(leaf).__name__}: {leaf}".rstrip(": ")
    elif isinstance(leaf, ToolsiftError):
        text = str(leaf)
    elif isinstance(leaf, OAuthFlowError):
        text = f"OAuth sign-in failed: {leaf}"
    else:
        text = f"{type(leaf).__name__}: {leaf}".rstrip(": ")
    return redact(text)
