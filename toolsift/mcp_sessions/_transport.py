"""The transport for an endpoint (the SDK's, or ``_stdio`` for stdio), watched for what the SDK keeps to itself.

The SDK's dispatcher drops an error response that carries no request id (some
servers answer a notification they do not know that way) with a debug log
line, and it does not tell anyone that the server's output ended. The session
needs both: the first becomes a warning that names the server, the second is
how a crashed stdio server is noticed at once instead of on the next call. So
the read stream is wrapped in :class:`WatchedReadStream`, which only looks at
what passes through; JSON-RPC itself stays the SDK's job.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Protocol, Self

import anyio
import httpx2
from anyio.abc import TaskGroup
from mcp.client import Transport
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError

from ._endpoint import Endpoint
from ._http_limit import limit_responses
from ._http_status import explain_http_errors
from ._stderr import StderrBuffer
from ._stdio import stdio_transport

__all__ = ["ConnectionWatcher", "WatchedReadStream", "open_transport"]

# Time for a dead child's last stderr lines (often the traceback) to arrive
# before the reader is stopped.
_STDERR_GRACE_SECONDS = 0.5
# SSE streams stay open between events; the SDK's own default.
_HTTP_READ_TIMEOUT = 300.0
# Room for the envelope of an event: the answers to requests are bounded by limit_responses before the
# SDK's own per-event bound would see them; that bound is left for the server's other messages.
_SSE_EVENT_SLACK = 64 * 1024

Streams = tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]


class ConnectionWatcher(Protocol):
    """What a watched connection reports to its session."""

    def transport_ended(self) -> None:
        """The server's output ended: it exited or dropped the connection."""

    def unparsable_message(self, error: Exception) -> None:
        """The server wrote something that is not a JSON-RPC message."""

    def orphan_error(self, error: ErrorData) -> None:
        """The server sent an error response without a request id."""


class WatchedReadStream:
    """A read stream that reports end-of-stream and odd messages, passing everything on."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], watcher: ConnectionWatcher) -> None:
        self._inner = inner
        self._watcher = watcher

    @property
    def last_context(self) -> object:
        # The dispatcher reads the sender's contextvars snapshot from here when the transport keeps one.
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item = await self._inner.receive()
        except anyio.EndOfStream:
            self._watcher.transport_ended()
            raise
        if isinstance(item, Exception):
            self._watcher.unparsable_message(item)
        elif isinstance(item.message, JSONRPCError) and item.message.id is None:
            self._watcher.orphan_error(item.message.error)
        return item

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> None:
        await self.aclose()


class _WatchedTransport:
    """Enters an SDK transport and hands the Client a watched read stream."""

    def __init__(self, inner: Transport, watcher: ConnectionWatcher, on_open: Callable[[], None] | None) -> None:
        self._inner = inner
        self._watcher = watcher
        self._on_open = on_open

    async def __aenter__(self) -> Streams:
        read, write = await self._inner.__aenter__()
        if self._on_open is not None:
            self._on_open()
        return WatchedReadStream(read, self._watcher), write

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc_val, exc_tb)


async def open_transport(
    endpoint: Endpoint,
    stack: AsyncExitStack,
    *,
    watcher: ConnectionWatcher,
    stderr: StderrBuffer,
    connect_timeout: float,
    server: str,
    max_message_bytes: int,
    auth: httpx2.Auth | None = None,
) -> Transport:
    """Build the transport for one connection; whatever it needs is entered on ``stack``.

    For stdio, the child's stderr is piped into ``stderr`` by a task that lives
    on ``stack`` too. Answers over ``max_message_bytes`` are dropped as they
    arrive (stdio, Streamable HTTP) and their request gets the error of
    ``_substitutes``; the legacy SSE transport keeps the SDK's fixed 1 MiB bound
    per message. ``auth`` (an OAuth flow) signs HTTP requests. The returned
    transport is not entered: the ``Client`` does that.
    """
    on_open: Callable[[], None] | None = None
    inner: Transport
    if endpoint.kind == "stdio":
        assert endpoint.command is not None
        pipe = stderr.open_pipe()
        stack.callback(pipe.close_writer)
        readers: TaskGroup = await stack.enter_async_context(anyio.create_task_group())

        async def stop_reader() -> None:
            # Shielded and bounded: an exit callback that raised a fresh cancellation here would
            # leave a cycle in the exception context that anyio's task group then loops over.
            with anyio.move_on_after(_STDERR_GRACE_SECONDS, shield=True):
                await pipe.done.wait()
            readers.cancel_scope.cancel()

        stack.push_async_callback(stop_reader)
        readers.start_soon(pipe.pump)
        inner = stdio_transport(endpoint, pipe.writer, server=server, max_message_bytes=max_message_bytes)
        # Once the child runs it holds its own copy; ours would keep the pipe open forever.
        on_open = pipe.close_writer
    elif endpoint.kind == "sse":
        assert endpoint.url is not None
        inner = sse_client(endpoint.url, headers=dict(endpoint.headers), timeout=connect_timeout,
                           sse_read_timeout=_HTTP_READ_TIMEOUT, auth=auth)
    else:
        assert endpoint.url is not None
        timeout = httpx2.Timeout(connect_timeout if math.isfinite(connect_timeout) else None,
                                 read=_HTTP_READ_TIMEOUT)
        # Uncompressed bodies: the limit counts the bytes on the wire, which then are the bytes of the text.
        headers = {"Accept-Encoding": "identity", **endpoint.headers}
        http = await stack.enter_async_context(httpx2.AsyncClient(
            headers=headers, timeout=timeout, auth=auth,
            event_hooks={"response": [explain_http_errors(), limit_responses(max_message_bytes)]}))
        inner = streamable_http_client(endpoint.url, http_client=http,
                                       max_sse_event_size=max_message_bytes + _SSE_EVENT_SLACK)
    return _WatchedTransport(inner, watcher, on_open)
