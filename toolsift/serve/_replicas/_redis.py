"""The few Redis commands the replicas use, typed, over redis-py's asyncio client.

redis-py declares most commands as returning ``T | Awaitable[T]`` (one
signature for its sync and async clients); this face awaits them with the
type they have on the asyncio client, so callers stay checked.

Connections come from a blocking pool: when every connection is busy (many
calls at once), a command waits for one instead of failing. A command that
meets a broken connection (Redis restarted, a connection killed or gone
stale) is retried on a fresh one, with backoff, a few times; one that gets no
answer fails after a timeout rather than hang. The URL's query overrides the
defaults: ``?max_connections=``, ``?timeout=`` (the wait for a free
connection) and ``?socket_timeout=``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..._exceptions import ConfigError
from ..._install import install_advice

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.client import PubSub

__all__ = ["RETRY_SECONDS", "RedisClient", "StreamEntry"]

T = TypeVar("T")
# One stream entry as XRANGE and XREAD give it: (entry id, fields).
StreamEntry = tuple[str, dict[str, str]]

# Connections a replica opens at most; commands beyond wait for a free one, up to _POOL_WAIT_SECONDS.
MAX_CONNECTIONS = 100
_POOL_WAIT_SECONDS = 10.0
# Longer than any blocking read the replicas make (a resumed stream waits 0.5 s for news).
_SOCKET_TIMEOUT_SECONDS = 10.0
# Attempts after the first on a broken connection, each on a fresh one: about 1.5 s in all, then the error.
_RETRIES = 5
_RETRY_BASE_SECONDS = 0.05
#: About how long a command goes on retrying a broken connection before it fails (the backoffs add up to ~1.55 s).
RETRY_SECONDS = 2.0


async def _awaited(value: Awaitable[T] | T) -> T:
    return await cast(Awaitable[T], value)


def _ms(seconds: float) -> int:
    """A time to live in whole milliseconds, at least one (Redis refuses zero)."""
    return max(1, int(seconds * 1000))


def _fields(fields: Mapping[str, str]) -> dict[Any, Any]:
    """XADD's fields, in the mapping type redis-py's stubs ask for."""
    return dict(fields)


class RedisClient:
    """A Redis connection pool and the key names of one gateway (``<prefix>:<part>:...``).

    Args:
        url: The Redis URL (its query may set the pool's limits).
        prefix: The first part of every key.
        max_connections: The pool's size, unless the URL sets ``max_connections``.

    Raises:
        ConfigError: When the ``redis`` package is not installed.
    """

    def __init__(self, url: str, *, prefix: str, max_connections: int = MAX_CONNECTIONS) -> None:
        try:
            from redis.asyncio import BlockingConnectionPool, Redis
            from redis.asyncio.retry import Retry
            from redis.backoff import ExponentialWithJitterBackoff
        except ImportError:
            raise ConfigError(
                f"serve.shared needs the redis package: {install_advice('redis')}", field="serve.shared"
            ) from None
        self.prefix = prefix
        retry = Retry(ExponentialWithJitterBackoff(base=_RETRY_BASE_SECONDS, cap=1.0), retries=_RETRIES)
        pool = BlockingConnectionPool.from_url(
            url,
            max_connections=max_connections,
            timeout=_POOL_WAIT_SECONDS,
            socket_timeout=_SOCKET_TIMEOUT_SECONDS,
            retry=retry,
            decode_responses=True,
        )
        self.redis: Redis = Redis.from_pool(pool)

    def key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    async def ping(self) -> bool:
        return bool(await _awaited(self.redis.ping()))

    async def get(self, key: str) -> str | None:
        return cast("str | None", await self.redis.get(key))

    async def set(self, key: str, value: str, *, seconds: float) -> None:
        await self.redis.set(key, value, px=_ms(seconds))

    async def claim(self, key: str, value: str, *, seconds: float | None) -> tuple[bool, str]:
        """SET NX: set ``key`` unless it is set; returns whether this call set it, and the value it holds.

        ``seconds``: how long the key lives; None: until it is deleted (or Redis loses its data).
        """
        if await self.redis.set(key, value, px=None if seconds is None else _ms(seconds), nx=True):
            return True, value
        return False, await self.get(key) or value

    async def claim_many(self, values: Mapping[str, str], *, seconds: float) -> int:
        """SET NX each key to its value; returns how many were set (the others were set already)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for key, value in values.items():
                pipe.set(key, value, px=_ms(seconds), nx=True)
            results: list[Any] = await pipe.execute()
        return sum(bool(result) for result in results)

    async def renew(self, key: str, value: str, *, seconds: float) -> bool:
        """SET ``key``; returns whether it was there before (a key renewed in time is)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.exists(key)
            pipe.set(key, value, px=_ms(seconds))
            results: list[Any] = await pipe.execute()
        return bool(results[0])

    async def exists(self, key: str) -> bool:
        return bool(await self.redis.exists(key))

    async def delete(self, *keys: str) -> None:
        await self.redis.delete(*keys)

    async def expire(self, keys: list[str], seconds: float) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.pexpire(key, _ms(seconds))
            await pipe.execute()

    async def append(
        self,
        key: str,
        fields: Mapping[str, str],
        *,
        max_length: int,
        seconds: float | None = None,
    ) -> str:
        """XADD, trimming the stream to about ``max_length`` entries; returns the entry id."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.xadd(key, _fields(fields), maxlen=max_length, approximate=True)
            if seconds is not None:
                pipe.pexpire(key, _ms(seconds))
            results: list[Any] = await pipe.execute()
        return cast(str, results[0])

    async def append_many(self, key: str, entries: Sequence[Mapping[str, str]], *, max_length: int) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            for fields in entries:
                pipe.xadd(key, _fields(fields), maxlen=max_length, approximate=True)
            await pipe.execute()

    async def entries(self, key: str, start: str, end: str = "+", count: int | None = None) -> list[StreamEntry]:
        return cast("list[StreamEntry]", await _awaited(self.redis.xrange(key, start, end, count=count)))

    async def read_after(self, key: str, last_id: str, *, block_ms: int) -> list[StreamEntry]:
        """XREAD BLOCK: the entries after ``last_id``, waiting up to ``block_ms`` for one."""
        found = cast(
            "list[tuple[str, list[StreamEntry]]] | None",
            await _awaited(self.redis.xread({key: last_id}, block=block_ms)),
        )
        return found[0][1] if found else []

    async def publish(self, channel: str, message: str) -> None:
        await self.redis.publish(channel, message)

    def pubsub(self) -> PubSub:
        return self.redis.pubsub(ignore_subscribe_messages=True)

    @staticmethod
    async def close_pubsub(pubsub: PubSub) -> None:
        await cast(Any, pubsub).aclose()  # untyped in redis-py

    async def aclose(self) -> None:
        await self.redis.aclose()
