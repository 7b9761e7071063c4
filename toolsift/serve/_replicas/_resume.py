"""Resuming a request's SSE stream on a replica other than the one running the request.

The SDK resumes a stream by replaying what its event store holds and then
waiting for the messages its own transport sends; but here the request runs
on the replica that received it, and its later messages arrive only in
Redis. So a resumed request stream replays the stored events, then follows
the session's event stream until the request's response is stored.

If the replica running the request lost its lease before answering (it was
killed or cut off), the call is lost with it. A call of a tool that is
read-only or idempotent by its annotations runs again, on the replica that
claims it first, and the stream follows that run. Any other call's outcome
is unknown, and running it twice behind the caller's back could do its
effect twice: the stream ends with an error that says so.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp_types import INTERNAL_ERROR, ErrorData, JSONRPCError
from sse_starlette import EventSourceResponse
from starlette.types import Receive, Scope, Send

from ._events import RedisEventStore, StoredEvent
from ._lease import ReplicaLease
from ._state import replica_of

__all__ = ["Rerun", "resume_request_stream"]

# Given the stream, its lost runner and the last event seen: the replica now running the call again, or None.
Rerun = Callable[[str, str, str], Awaitable[str | None]]


def _event(stored: StoredEvent) -> dict[str, str]:
    assert stored.message is not None
    return {
        "id": stored.id,
        "event": "message",
        "data": stored.message.model_dump_json(by_alias=True, exclude_unset=True),
    }


def _lost(stream: str, instance: str) -> dict[str, str]:
    request_id: int | str = int(stream) if stream.lstrip("-").isdigit() else stream
    replica = replica_of(instance)
    error = JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=ErrorData(
            code=INTERNAL_ERROR,
            message=f"the gateway replica {replica!r} running this request stopped before it answered; the call "
            "may or may not have run, so it was not repeated",
        ),
    )
    return {"event": "message", "data": error.model_dump_json(by_alias=True, exclude_unset=True)}


async def _follow(
    store: RedisEventStore, lease: ReplicaLease, last: StoredEvent, *, poll_ms: int, rerun: Rerun
) -> AsyncIterator[dict[str, str]]:
    """The stream's events after ``last``, until its response, or the error of a lost request."""
    stream, cursor, runner = last.stream, last.id, last.replica
    while True:
        batch = await store.wait_after(cursor, block_ms=poll_ms)
        for stored in batch:
            cursor = stored.id
            if stored.stream != stream or stored.message is None:
                continue
            yield _event(stored)
            if stored.answers(stream):
                return
        # Checked after an empty wait, and then looked again: the answer may have landed in between.
        if not batch and not await lease.alive(runner) and not await store.after(cursor):
            again = await rerun(stream, runner, cursor)
            if again is None or again == runner:
                yield _lost(stream, runner)
                return
            runner = again


async def resume_request_stream(
    store: RedisEventStore,
    lease: ReplicaLease,
    last: StoredEvent,
    session_id: str,
    scope: Scope,
    receive: Receive,
    send: Send,
    *,
    poll_ms: int,
    rerun: Rerun,
) -> None:
    """Answer a GET with ``Last-Event-ID`` naming ``last``, an event of a request stream."""
    headers: dict[str, Any] = {
        "Cache-Control": "no-cache, no-transform",
        "Connection": "keep-alive",
        MCP_SESSION_ID_HEADER: session_id,
    }
    response = EventSourceResponse(_follow(store, lease, last, poll_ms=poll_ms, rerun=rerun), headers=headers)
    await response(scope, receive, send)
