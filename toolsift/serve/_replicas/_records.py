"""``SessionRecords``: what a replica needs to take a session up, in Redis, and written again when Redis loses it.

A session is recorded once it is open (the client's ``initialize`` and the
negotiated version); a request for it on another replica is served from that
record. A Redis restarted empty (no persistence), flushed, or failed over
before the record reached the new primary would turn every request of a live
session that lands on another replica into "Session not found", and the client
would lose its session. So each replica writes the records of the sessions it
holds again when it finds that Redis lost its data:

- its lease renewal finds the lease gone (it never expires while renewed);
- another replica asks (the ``restore`` channel), having found the loss first;
- a request for a session Redis does not know lands here, and Redis's
  *epoch* (a token the first replica to look sets, with no expiry) is not the
  one this replica last saw: the data it belonged to is gone. This replica
  asks every other to write its records again, and waits for the record for
  one lease period (and a reconnection), the time in which every live
  replica renews its lease and so finds the loss itself.

A request for a session no replica holds waits that long only in that period
after a loss; otherwise it is answered at once.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Callable, Iterable
from typing import Any

import anyio
from mcp.server.connection import Connection

from ._redis import RETRY_SECONDS
from ._state import SharedState

__all__ = ["SessionRecords", "record_of"]

logger = logging.getLogger("toolsift.serve")

# How often a request waiting for a session's record after a loss looks for it.
_LOOK_SECONDS = 0.05

Record = dict[str, Any]


def record_of(connection: Connection | None) -> Record | None:
    """The record of an initialized connection (its version and the client's parameters); None before that."""
    params = connection.client_params if connection is not None else None
    if connection is None or params is None:
        return None
    return {
        "protocolVersion": connection.protocol_version,
        "client": params.model_dump(mode="json", by_alias=True, exclude_none=True),
    }


class SessionRecords:
    """The session records of one replica's Redis.

    Args:
        state: The replica's share of the gateway's state.
        held: The sessions this replica serves now: their ids and connections.
    """

    def __init__(self, state: SharedState, held: Callable[[], Iterable[tuple[str, Connection | None]]]) -> None:
        self.state = state
        self._held = held
        #: Where a replica that found Redis's data lost asks the others to write their records again.
        self.channel = state.redis.key("restore")
        self._lost_at = -float("inf")
        self._epoch_key = state.redis.key("epoch")
        self._epoch = ""

    async def start(self) -> None:
        """Note the epoch of the Redis this replica starts on, to tell later whether it lost its data."""
        self._epoch = await self._current_epoch()

    async def _current_epoch(self) -> str:
        _, epoch = await self.state.redis.claim(self._epoch_key, secrets.token_hex(8), seconds=None)
        return epoch

    async def save(self, session_id: str, record: Record) -> None:
        await self.state.redis.set(
            self.state.record_key(session_id), json.dumps(record), seconds=self.state.settings.session_idle_seconds
        )

    async def load(self, session_id: str) -> Record | None:
        """The session's record; None when no replica holds the session."""
        key = self.state.record_key(session_id)
        saved = await self.state.redis.get(key)
        if saved is None and self._waiting() <= 0 and await self._current_epoch() != self._epoch:
            await self.lost()
        with anyio.move_on_after(self._waiting()):
            while saved is None:
                await anyio.sleep(_LOOK_SECONDS)
                saved = await self.state.redis.get(key)
        return json.loads(saved) if saved is not None else None

    def _waiting(self) -> float:
        """How long a missing record may still be written again: the rest of the lease period after a loss."""
        return self._lost_at + self.state.lease.seconds + RETRY_SECONDS - time.monotonic()

    async def lost(self) -> None:
        """Redis lost its data: write this replica's records again, and ask every other replica to."""
        self._lost_at = time.monotonic()
        self._epoch = await self._current_epoch()
        await self.restore()
        await self.state.redis.publish(self.channel, json.dumps({"replica": self.state.replica}))

    async def restore(self) -> None:
        """Write the records of the sessions this replica holds where Redis has none (SET NX)."""
        records = {self.state.record_key(session): record_of(connection) for session, connection in self._held()}
        held = {key: json.dumps(record) for key, record in records.items() if record is not None}
        written = await self.state.redis.claim_many(held, seconds=self.state.settings.session_idle_seconds)
        if written:
            logger.warning(
                "replica %s wrote %d session record(s) to Redis again: Redis had lost them",
                self.state.replica,
                written,
            )
