"""``AuditStream``: every replica's audit records in one Redis stream (``<prefix>:audit``).

Records are queued as calls emit them and written in batches by one task.
Each entry holds the replica's name and the record as the JSON-lines file
has it; that file, when configured, is still written by each replica. While
Redis is unreachable, records are kept in the queue (up to a bound) and the
failure is logged; a batch being written when the replica stops is finished
first, so no record is written twice.

A call waits on Redis once: the registry records its start and waits for
:meth:`AuditStream.flush` before the tool runs, so a call lost with a killed
replica is in the stream. While Redis does not take records, calls do not
run (after ``START_WAIT_SECONDS``) rather than run unrecorded.
"""

from __future__ import annotations

import logging

import anyio
from anyio.abc import TaskStatus

from ...registry import AuditLog
from ...registry._internal import AuditEvent
from ._redis import RedisClient

__all__ = ["AuditStream"]

logger = logging.getLogger("toolsift.serve")

MAX_QUEUED = 10_000
MAX_BATCH = 500
MAX_ENTRIES = 1_000_000
# How long a call waits for its start record to reach Redis before it is refused.
START_WAIT_SECONDS = 10.0
_FLUSH_SECONDS = 5.0
_RETRY_SECONDS = 1.0


class AuditStream:
    """Copies the records of ``audit`` to the stream ``<prefix>:audit`` while :meth:`run` runs."""

    def __init__(self, redis: RedisClient, replica: str, audit: AuditLog) -> None:
        self.redis = redis
        self.replica = replica
        self.audit = audit
        self.key = redis.key("audit")
        self._queued: list[dict[str, str]] = []
        self._wake = anyio.Event()
        self._dropped = 0
        # Records ever queued and ever written: a flush waits until the second reaches what the first was.
        self._accepted = 0
        self._written = 0
        self._progress = anyio.Event()

    def _record(self, event: AuditEvent) -> None:
        if len(self._queued) >= MAX_QUEUED:
            self._dropped += 1
            if self._dropped == 1:
                logger.warning(
                    "audit records are not reaching Redis fast enough; dropping some from the stream "
                    "(the JSON-lines file keeps them)"
                )
            return
        self._queued.append({"replica": self.replica, "record": event.to_json()})
        self._accepted += 1
        self._wake.set()

    async def flush(self) -> None:
        """Wait until the records queued so far are in Redis.

        Raises:
            TimeoutError: When they are not within ``START_WAIT_SECONDS``, or the queue is full.
        """
        if len(self._queued) >= MAX_QUEUED:
            raise TimeoutError("audit records are not reaching Redis (the queue is full)")
        target = self._accepted
        with anyio.move_on_after(START_WAIT_SECONDS):
            while self._written < target:
                await self._progress.wait()
            return
        raise TimeoutError(f"audit records did not reach Redis within {START_WAIT_SECONDS:g}s")

    async def _write_batch(self) -> None:
        batch = self._queued[:MAX_BATCH]
        with anyio.CancelScope(shield=True):  # a batch sent is a batch finished: none is written twice
            await self.redis.append_many(self.key, batch, max_length=MAX_ENTRIES)
        del self._queued[: len(batch)]
        self._written += len(batch)
        self._progress.set()
        self._progress = anyio.Event()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Write queued records until cancelled, then what is still queued (for up to a few seconds)."""
        unsubscribe = self.audit.subscribe(self._record, flush=self.flush)
        task_status.started()
        try:
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                failing = False
                while self._queued:
                    try:
                        await self._write_batch()
                    except Exception as exc:
                        if not failing:  # once per outage, not once per retry
                            logger.warning("could not write audit records to Redis (%s); retrying", exc)
                        failing = True
                        await anyio.sleep(_RETRY_SECONDS)
        finally:
            unsubscribe()
            with anyio.CancelScope(shield=True), anyio.move_on_after(_FLUSH_SECONDS):
                while self._queued:
                    try:
                        await self._write_batch()
                    except Exception as exc:
                        logger.warning("%d audit records did not reach Redis: %s", len(self._queued), exc)
                        break
