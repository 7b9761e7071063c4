"""``RedisEventStore``: one session's SSE events in a Redis stream, so any replica can replay them.

The SDK's transport stores every message it sends on a session's streams
(the priming event of each request stream included) before sending it; the
event id the client sees is the Redis entry id. Each entry also names the
stream it belongs to (the request's id, or the standalone GET stream) and
the run of the replica that wrote it, which is how another replica knows
whose call a resumed stream belongs to. The priming event of a ``tools/call`` also keeps
the request, so that a call lost with its replica can be run again where
that is safe.

When Redis cannot store an event (after the client's retries on fresh
connections), the SDK's transport must still hear back: an exception from
the store ends the session's message router for good, and every later
answer of the session would be lost. So a priming event that cannot be
stored fails its request before it runs (the client gets a JSON-RPC error,
HTTP 500), and any other message goes to the client without an event id:
delivered, but a stream broken after it cannot be resumed.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from mcp_types import JSONRPCError, JSONRPCMessage, JSONRPCResponse, jsonrpc_message_adapter

from ._redis import RedisClient, StreamEntry

__all__ = ["RedisEventStore", "StoredEvent", "events_key"]

logger = logging.getLogger("toolsift.serve")

# Entries kept per session (about: Redis trims whole nodes); a client resuming past them gets nothing.
MAX_EVENTS = 10_000
_ENTRY_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")


def events_key(redis: RedisClient, session_id: str) -> str:
    """The Redis stream holding a session's events."""
    return redis.key("events", session_id)


@dataclass(frozen=True)
class StoredEvent:
    """One stored event: ``message`` is None for a stream's priming event, which may hold the ``request``."""

    id: str
    stream: str
    replica: str
    message: JSONRPCMessage | None
    request: str = ""

    @classmethod
    def parse(cls, entry: StreamEntry) -> StoredEvent:
        entry_id, fields = entry
        data = fields.get("m", "")
        message = jsonrpc_message_adapter.validate_json(data, by_name=False) if data else None
        return cls(entry_id, fields.get("s", ""), fields.get("r", ""), message, fields.get("q", ""))

    def answers(self, stream: str) -> bool:
        """Whether this is the response (or error) that ends request stream ``stream``."""
        message = self.message
        return isinstance(message, JSONRPCResponse | JSONRPCError) and str(message.id) == stream


class RedisEventStore(EventStore):
    """The event store of one session, shared by every replica (``<prefix>:events:<session>``).

    Args:
        redis: The gateway's Redis.
        session_id: The MCP session the events belong to.
        replica: The replica instance written beside each event this replica stores.
        ttl: Seconds the events outlive the session's last stored event.
    """

    def __init__(self, redis: RedisClient, session_id: str, *, replica: str, ttl: float) -> None:
        self.redis = redis
        self.key = events_key(redis, session_id)
        self.replica = replica
        self.ttl = ttl
        # Request JSON by stream id, put by the session manager before the SDK stores the priming event.
        self.requests: dict[str, str] = {}

    async def store_event(self, stream_id: str, message: JSONRPCMessage | None) -> str:
        """Store one event; its id, or '' for a message Redis could not take (sent without an id).

        Raises:
            redis.RedisError: When the priming event of a request (``message`` None) could not be stored.
        """
        fields = {"s": stream_id, "r": self.replica}
        if message is None:
            fields["m"] = ""
            request = self.requests.pop(stream_id, None)
            if request is not None:
                fields["q"] = request
        else:
            fields["m"] = message.model_dump_json(by_alias=True, exclude_unset=True)
        try:
            return await self.redis.append(self.key, fields, max_length=MAX_EVENTS, seconds=self.ttl)
        except Exception as exc:  # redis-py's errors: unreachable after its retries, or the write refused
            if message is None:
                logger.warning(
                    "replica %s refuses request %s before it runs: Redis could not store its stream (%s)",
                    self.replica,
                    stream_id,
                    exc,
                )
                raise
            logger.warning(
                "replica %s could not store an event of stream %s in Redis (%s); it is sent "
                "without an event id, so the client cannot resume past it",
                self.replica,
                stream_id,
                exc,
            )
            return ""

    async def event(self, event_id: str) -> StoredEvent | None:
        """The stored event ``event_id``, or None when it is unknown (or trimmed, or malformed)."""
        if not _ENTRY_ID.fullmatch(event_id):  # not an id this store gave out
            return None
        found = await self.redis.entries(self.key, event_id, event_id, count=1)
        return StoredEvent.parse(found[0]) if found else None

    async def request_of(self, stream: str, before: str) -> str:
        """The request a priming event of ``stream`` (stored up to ``before``) keeps, or ''."""
        for entry in await self.redis.entries(self.key, "-", before):
            event = StoredEvent.parse(entry)
            if event.stream == stream and event.request:
                return event.request
        return ""

    async def after(self, event_id: str) -> list[StoredEvent]:
        """The events stored after ``event_id``, of every stream."""
        return [StoredEvent.parse(entry) for entry in await self.redis.entries(self.key, f"({event_id}")]

    async def wait_after(self, event_id: str, *, block_ms: int) -> list[StoredEvent]:
        """The events stored after ``event_id``, waiting up to ``block_ms`` for the first."""
        return [
            StoredEvent.parse(entry) for entry in await self.redis.read_after(self.key, event_id, block_ms=block_ms)
        ]

    async def replay_events_after(self, last_event_id: str, send_callback: EventCallback) -> str | None:
        last = await self.event(last_event_id)
        if last is None:
            return None
        for event in await self.after(last_event_id):
            if event.stream == last.stream and event.message is not None:
                await send_callback(EventMessage(event.message, event.id))
        return last.stream
