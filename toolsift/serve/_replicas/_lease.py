"""``ReplicaLease``: a replica says it is alive by renewing a key that expires.

A replica that stops (killed, frozen, cut off) stops renewing; once its
lease expires the others know that the calls it was running will not be
answered. A replica that stops cleanly gives its lease up at once. A renewal
that finds the lease gone tells the replica that Redis lost its data
(restarted empty, flushed, failed over): :attr:`ReplicaLease.lapsed`.

Renewals go through a connection of their own: a replica so busy that every
connection of its pool is taken must not be taken for dead.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio
from anyio.abc import TaskStatus

from ._redis import RedisClient

__all__ = ["ReplicaLease"]

logger = logging.getLogger("toolsift.serve")


class ReplicaLease:
    """The lease of one replica run (``name`` is ``<replica>#<run>``), valid ``seconds`` after each renewal.

    It is renewed three times as often as it would expire.

    Args:
        redis: The replica's Redis, for asking after other replicas' leases.
        renewer: A client of the same Redis used for this lease only (one connection).
        name: This replica run.
        seconds: How long the lease lasts after each renewal.
    """

    def __init__(self, redis: RedisClient, renewer: RedisClient, name: str, *, seconds: float) -> None:
        self.redis = redis
        self.renewer = renewer
        self.name = name
        self.seconds = seconds
        #: Called when a renewal finds the lease gone: what the replica keeps in Redis must be written again.
        self.lapsed: list[Callable[[], Awaitable[None]]] = []

    def _key(self, name: str) -> str:
        return self.redis.key("replica", name)

    async def hold(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Take the lease, then renew it until cancelled; on the way out, give it up."""
        await self.renewer.set(self._key(self.name), "alive", seconds=self.seconds)
        task_status.started()
        try:
            while True:
                await anyio.sleep(self.seconds / 3)
                try:
                    if not await self.renewer.renew(self._key(self.name), "alive", seconds=self.seconds):
                        await self._lapse()
                except Exception as exc:  # Redis away for a moment: the next renewal may succeed
                    logger.warning("replica %s could not renew its lease in Redis: %s", self.name, exc)
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(self.seconds / 3):
                try:
                    await self.renewer.delete(self._key(self.name))
                except Exception as exc:  # it expires by itself
                    logger.warning("replica %s could not give up its lease in Redis: %s", self.name, exc)

    async def _lapse(self) -> None:
        logger.warning(
            "replica %s found its lease gone from Redis (Redis lost its data, or the lease ran out before "
            "this renewal); writing what it keeps there again",
            self.name,
        )
        for callback in self.lapsed:
            try:
                await callback()
            except Exception as exc:  # the next lapse, or the next request that misses, tries again
                logger.warning("replica %s could not write what it keeps in Redis again: %s", self.name, exc)

    async def alive(self, name: str) -> bool:
        """Whether the replica run ``name`` holds its lease."""
        return await self.redis.exists(self._key(name))
