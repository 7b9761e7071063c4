"""The transport for an endpoint (the SDK's, or ``_stdio`` for stdio), watched for what the SDK keeps to itself.

The SDK's dispatcher drops an error response that carries no request id (some
servers answer a notification they do not know that way) with a debug log
line, and it does not tell anyone that the server's output ended. The session
needs both: the first becomes a warning that names the server, the second is
how a crashed stdio server is noticed at once instead of on the next call. So
the read stream is wrapped in :class:`WatchedReadStream`, which only looks at
what passes through; JSON-RPC itself stays the SDK's job.

Which transport a connection uses is a :class:`SessionTransport`: the
endpoint's type picks stdio, and an HTTP endpoint's kind Streamable HTTP or
legacy SSE (:func:`transport_for`), and ``SessionOptions.transports`` may name another
for a server, such as :class:`MemoryTransport`, a server object running in
this process (tests run the session, group and reload logic on it without a
child process or a socket).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, Self, final

import anyio
import httpx2
from anyio.abc import TaskGroup
from mcp.client import Transport
from mcp.client._memory import InMemoryTransport
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError

from ._endpoint import Endpoint, HttpEndpoint, StdioEndpoint
from ._http_limit import limit_responses
from ._http_status import explain_http_errors
from ._result_kind import ResultKinds
from ._stderr import StderrBuffer
from ._stdio import stdio_transport

__all__ = [
    "ConnectionWatcher",
    "HttpTransport",
    "MemoryTransport",
    "SessionTransport",
    "SseTransport",
    "StdioTransport",
    "TransportContext",
    "WatchedReadStream",
    "open_transport",
    "transport_for",
]

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

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        watcher: ConnectionWatcher,
        kinds: ResultKinds | None = None,
    ) -> None:
        self._inner = inner
        self._watcher = watcher
        self._kinds = kinds or ResultKinds()

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
        else:
            self._kinds.received(item)
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

    def __init__(self, inner: Transport, watcher: ConnectionWatcher) -> None:
        self._inner = inner
        self._watcher = watcher

    async def __aenter__(self) -> Streams:
        read, write = await self._inner.__aenter__()
        kinds = ResultKinds()
        return WatchedReadStream(read, self._watcher, kinds), _NotedWriteStream(write, kinds)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc_val, exc_tb)


class _NotedWriteStream:
    """A write stream that shows each message to :class:`ResultKinds` before sending it."""

    def __init__(self, inner: WriteStream[SessionMessage], kinds: ResultKinds) -> None:
        self._inner = inner
        self._kinds = kinds

    async def send(self, item: SessionMessage, /) -> None:
        self._kinds.sent(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        return None


@dataclass(frozen=True)
class TransportContext:
    """What one connection gives its transport besides the endpoint.

    Attributes:
        server: The server name, for errors and log records.
        watcher: Told about end-of-stream and odd messages.
        stderr: Where a stdio child's stderr goes.
        connect_timeout: Seconds to connect (HTTP).
        max_message_bytes: Answers over this size are dropped as they arrive and their call fails.
        auth: An OAuth flow that signs HTTP requests.
    """

    server: str
    watcher: ConnectionWatcher
    stderr: StderrBuffer
    connect_timeout: float
    max_message_bytes: int
    auth: httpx2.Auth | None = None


class SessionTransport(Protocol):
    """How a session reaches its server; asked once per connection, since an SDK ``Client`` is single-use."""

    async def open(self, stack: AsyncExitStack, context: TransportContext) -> Transport:
        """Build the SDK transport of one connection; whatever it needs is entered on ``stack``.

        The returned transport is not entered: the ``Client`` does that.
        """
        ...


@final
class StdioTransport:
    """A child process speaking JSON-RPC lines on stdin/stdout, its stderr piped into the session's buffer."""

    def __init__(self, endpoint: StdioEndpoint) -> None:
        self._endpoint = endpoint

    async def open(self, stack: AsyncExitStack, context: TransportContext) -> Transport:
        pipe = context.stderr.open_pipe()
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
        inner = stdio_transport(
            self._endpoint, pipe.writer, server=context.server, max_message_bytes=context.max_message_bytes
        )
        # Once the child runs it holds its own copy; ours would keep the pipe open forever.
        return _then(inner, pipe.close_writer)


@final
class HttpTransport:
    """Streamable HTTP, with the endpoint's headers, answers bounded on the wire and HTTP errors explained."""

    def __init__(self, endpoint: HttpEndpoint) -> None:
        self._endpoint = endpoint

    async def open(self, stack: AsyncExitStack, context: TransportContext) -> Transport:
        connect = context.connect_timeout
        timeout = httpx2.Timeout(connect if math.isfinite(connect) else None, read=_HTTP_READ_TIMEOUT)
        # Uncompressed bodies: the limit counts the bytes on the wire, which then are the bytes of the text.
        headers = {"Accept-Encoding": "identity", **self._endpoint.headers}
        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers=headers,
                timeout=timeout,
                auth=context.auth,
                event_hooks={"response": [explain_http_errors(), limit_responses(context.max_message_bytes)]},
            )
        )
        return streamable_http_client(
            self._endpoint.url, http_client=http, max_sse_event_size=context.max_message_bytes + _SSE_EVENT_SLACK
        )


@final
class SseTransport:
    """The legacy HTTP+SSE transport; it keeps the SDK's fixed 1 MiB bound per message."""

    def __init__(self, endpoint: HttpEndpoint) -> None:
        self._endpoint = endpoint

    async def open(self, stack: AsyncExitStack, context: TransportContext) -> Transport:
        return sse_client(
            self._endpoint.url,
            headers=dict(self._endpoint.headers),
            timeout=context.connect_timeout,
            sse_read_timeout=_HTTP_READ_TIMEOUT,
            auth=context.auth,
        )


@final
class MemoryTransport:
    """A server object in this process, reached over memory streams with JSON-RPC messages as over stdio.

    Each connection runs the server anew on fresh streams (the server object
    itself is shared), and closing the connection ends that run. There is no
    process, no size limit and no stderr; the server's exceptions become
    JSON-RPC errors, as over any other transport.

    Args:
        server: An ``MCPServer`` or a low-level ``Server``.
    """

    def __init__(self, server: Server[Any] | MCPServer) -> None:
        self._server = server

    async def open(self, stack: AsyncExitStack, context: TransportContext) -> Transport:
        return InMemoryTransport(self._server)


def transport_for(endpoint: Endpoint) -> SessionTransport:
    """The transport of the endpoint's type: stdio, or Streamable HTTP or SSE as its kind says."""
    match endpoint:
        case StdioEndpoint():
            return StdioTransport(endpoint)
        case HttpEndpoint(kind="sse"):
            return SseTransport(endpoint)
        case HttpEndpoint():
            return HttpTransport(endpoint)


async def open_transport(transport: SessionTransport, stack: AsyncExitStack, context: TransportContext) -> Transport:
    """Open ``transport`` for one connection, its read stream watched for what ``context.watcher`` is told."""
    return _WatchedTransport(await transport.open(stack, context), context.watcher)


@asynccontextmanager
async def _then(inner: Transport, callback: Callable[[], None]) -> AsyncIterator[Streams]:
    """Enter ``inner``, call ``callback`` once it is open, and yield its streams."""
    async with inner as streams:
        callback()
        yield streams
