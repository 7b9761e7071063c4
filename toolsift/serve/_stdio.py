"""Answering malformed lines on stdio instead of dropping them.

The SDK's stdio transport hands a line it cannot decode to the server as an
exception, and the server drops it: the client, waiting for an answer, never
gets one. JSON-RPC 2.0 asks for an error response with ``"id": null`` (the id
could not be read), so this read stream answers such lines itself, ``-32700``
for text that is not JSON and ``-32600`` for JSON that is not a JSON-RPC
message, and goes on reading. Over HTTP the SDK already answers both.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Self, final

import mcp.types as types
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["AnsweringReadStream"]


def _error(exc: Exception) -> types.JSONRPCError:
    not_json = isinstance(exc, ValidationError) and any(e["type"] == "json_invalid" for e in exc.errors())
    if not_json:
        error = types.ErrorData(code=types.PARSE_ERROR, message="Parse error: the line is not valid JSON")
    else:
        error = types.ErrorData(
            code=types.INVALID_REQUEST,
            message="Invalid request: the line is not a JSON-RPC 2.0 request, notification or response",
        )
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=error)


@final
class AnsweringReadStream:
    """A stdio read stream that answers undecodable lines with a JSON-RPC error.

    Args:
        inner: The transport's read stream (messages, or exceptions for bad lines).
        write: The transport's write stream, where the error responses go.
    """

    def __init__(self, inner: ReadStream[SessionMessage | Exception], write: WriteStream[SessionMessage]) -> None:
        self._inner = inner
        self._write = write

    @property
    def last_context(self) -> Any:
        """The sender context of the last message, as the SDK's context-aware streams expose it."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while isinstance(item := await self._inner.receive(), Exception):
            await self._write.send(SessionMessage(_error(item)))
        return item

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        # The inner stream's own iteration decides when the stream has ended.
        while isinstance(item := await self._inner.__anext__(), Exception):
            await self._write.send(SessionMessage(_error(item)))
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> None:
        await self.aclose()
