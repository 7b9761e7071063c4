"""``SharedState``: one replica's share of a gateway's state in Redis.

Running before the replica serves (:meth:`SharedState.running`), it checks
that Redis answers, holds the replica's lease and copies audit records to
the shared stream. The
session manager and the server keep their shared data through it.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Self

import anyio

from ..._exceptions import ConfigError
from ..._secrets._display import mask_url
from ...config._internal import SharedSettings
from ...registry import AuditLog
from ._audit import AuditStream
from ._events import events_key
from ._lease import ReplicaLease
from ._redis import RedisClient

__all__ = ["SharedState", "replica_of"]

logger = logging.getLogger("toolsift.serve")

_READY_SECONDS = 2.0
# Between a replica's name and the run it is in (names may not hold it).
_INSTANCE_MARK = "#"


def replica_of(instance: str) -> str:
    """The replica name of an instance id (``gw-1#5f3a9c01`` -> ``gw-1``)."""
    return instance.partition(_INSTANCE_MARK)[0]


class SharedState:
    """A replica's Redis: its name and lease, the audit stream, and each session's unlocked tools.

    Args:
        settings: The ``serve.shared`` section.
        audit: The audit log whose records go to the shared stream.

    Raises:
        ConfigError: When the ``redis`` package is missing.
    """

    def __init__(self, settings: SharedSettings, audit: AuditLog) -> None:
        self.settings = settings
        self.replica = settings.replica or f"{socket.gethostname()}-{os.getpid()}"
        # This run of the replica: a replica restarted under its name is another instance, whose lease
        # says nothing about the calls the previous one took down with it.
        self.instance = f"{self.replica}{_INSTANCE_MARK}{secrets.token_hex(4)}"
        self.url = settings.redis.get_secret_value()
        self.redis = RedisClient(self.url, prefix=settings.key_prefix)
        self.lease = ReplicaLease(
            self.redis,
            RedisClient(self.url, prefix=settings.key_prefix, max_connections=1),
            self.instance,
            seconds=settings.lease_seconds,
        )
        self.audit = AuditStream(self.redis, self.replica, audit)

    def __repr__(self) -> str:
        return f"SharedState(replica={self.replica!r}, redis={mask_url(self.url)!r})"

    def record_key(self, session_id: str) -> str:
        """The key of what a replica needs to take a session up (the client's initialize, the version)."""
        return self.redis.key("session", session_id)

    def unlocked_key(self, session_id: str) -> str:
        return self.redis.key("unlocked", session_id)

    def session_keys(self, session_id: str) -> list[str]:
        """Every key a session owns, for expiry and deletion."""
        return [self.record_key(session_id), events_key(self.redis, session_id), self.unlocked_key(session_id)]

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Self]:
        """Reach Redis, hold the lease and copy audit records while the context runs.

        Raises:
            ConfigError: When Redis cannot be reached (naming the URL, without its password).
        """
        try:
            try:
                await self.redis.ping()
            except Exception as exc:
                raise ConfigError(
                    f"cannot reach Redis at {mask_url(self.url)}: {exc}", field="serve.shared.redis"
                ) from None
            async with anyio.create_task_group() as group:
                await group.start(self.lease.hold)
                await group.start(self.audit.run)
                logger.info("replica %s shares its sessions through Redis at %s", self.replica, mask_url(self.url))
                yield self
                group.cancel_scope.cancel()
        finally:
            try:
                await self.redis.aclose()
            finally:
                await self.lease.renewer.aclose()

    async def ready(self) -> bool:
        """Whether Redis answers now (for the readiness endpoint)."""
        with anyio.move_on_after(_READY_SECONDS):
            try:
                return await self.redis.ping()
            except Exception:
                return False
        return False

    # -- unlocked tools ---------------------------------------------------------------------------

    async def unlocked(self, session_id: str) -> list[str]:
        """The tools the session's searches unlocked, least recently used first."""
        saved = await self.redis.get(self.unlocked_key(session_id))
        names = json.loads(saved) if saved else []
        return [name for name in names if isinstance(name, str)]

    async def save_unlocked(self, session_id: str, names: Iterable[str]) -> None:
        await self.redis.set(
            self.unlocked_key(session_id), json.dumps(list(names)), seconds=self.settings.session_idle_seconds
        )
