"""How one session's messages cross replicas: the dispatcher's two ends, adapted.

A session may be served by several replicas at once, each with its own SDK
dispatcher over its own transport. Two kinds of message must then reach a
replica other than the one that received or sent them:

- The client's answer to a server request (an elicitation, a sampling
  request), or its cancellation of a call, comes in a POST that the load
  balancer may give to any replica. That replica publishes it; every replica
  serving the session injects it into its dispatcher's read stream
  (:class:`InjectableReadStream`), and the one holding the request acts on
  it. Server request ids are random per dispatcher (:class:`SharedDispatcher`),
  so two replicas never wait on the same id.
- A notification or request that belongs to no request (``tools/list_changed``
  after a search unlocked tools) travels on the client's standalone GET
  stream, which is open on one replica only. :class:`PublishingWriteStream`
  publishes such messages; the replica holding the GET stream sends them.
"""

from __future__ import annotations

import contextlib
import contextvars
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import JSONRPCNotification, JSONRPCRequest

__all__ = ["InjectableReadStream", "PublishingWriteStream", "SharedDispatcher", "standalone"]

_ID_SPACE = 2**52  # JSON numbers stay exact below 2**53
_BUFFER = 64


class SharedDispatcher(JSONRPCDispatcher[Any]):
    """The SDK's dispatcher, numbering its requests from a random start instead of 1."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._next_request = secrets.randbelow(_ID_SPACE)

    def _allocate_id(self) -> int:
        # The SDK's hook for minting request ids; the answers of every replica reach every dispatcher.
        self._next_request = (self._next_request + 1) % _ID_SPACE
        return self._next_request


class InjectableReadStream:
    """A transport's read stream, plus messages injected from elsewhere (answers from other replicas).

    Run :meth:`pump` in a task while the dispatcher reads. Like the SDK's
    stream, it keeps the context of whoever sent the last item
    (``last_context``), so handlers see the request's context variables.
    """

    def __init__(self, source: Any) -> None:
        self._source = source
        send, receive = anyio.create_memory_object_stream[tuple[contextvars.Context, Any]](_BUFFER)
        self._send: MemoryObjectSendStream[tuple[contextvars.Context, Any]] = send
        self._receive: MemoryObjectReceiveStream[tuple[contextvars.Context, Any]] = receive
        self.last_context: contextvars.Context | None = None

    async def pump(self) -> None:
        """Forward the transport's messages until it closes, then end this stream."""
        async with self._send:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):  # the transport ended
                async for item in self._source:
                    context = getattr(self._source, "last_context", None) or contextvars.copy_context()
                    await self._send.send((context, item))

    def inject(self, message: SessionMessage) -> None:
        """Deliver ``message`` as if it came from this replica's transport (dropped once closed)."""
        # Dropped when the session is closing or flooded: the SDK's own timeouts answer the waiter then.
        with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._send.send_nowait((contextvars.copy_context(), message))

    async def receive(self) -> Any:
        context, item = await self._receive.receive()
        self.last_context = context
        return item

    def __aiter__(self) -> InjectableReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        self._receive.close()

    async def aclose(self) -> None:
        self._receive.close()

    async def __aenter__(self) -> InjectableReadStream:
        return self

    async def __aexit__(self, *args: object) -> None:
        self.close()


def standalone(message: SessionMessage) -> bool:
    """Whether ``message`` goes to the standalone GET stream: a request or notification of no request."""
    if not isinstance(message.message, JSONRPCRequest | JSONRPCNotification):
        return False
    metadata = message.metadata
    return not (isinstance(metadata, ServerMessageMetadata) and metadata.related_request_id is not None)


class PublishingWriteStream:
    """A transport's write stream that hands standalone messages to ``publish`` instead.

    ``publish`` gets them as JSON; the replica that holds the session's GET
    stream writes them to its transport (``inner``) when they come back.
    """

    def __init__(self, inner: Any, publish: Callable[[str], Awaitable[None]]) -> None:
        self.inner = inner
        self._publish = publish

    async def send(self, item: SessionMessage) -> None:
        if standalone(item):
            await self._publish(item.message.model_dump_json(by_alias=True, exclude_unset=True))
        else:
            await self.inner.send(item)

    def close(self) -> None:
        self.inner.close()

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> PublishingWriteStream:
        return self

    async def __aexit__(self, *args: object) -> None:
        await self.aclose()
