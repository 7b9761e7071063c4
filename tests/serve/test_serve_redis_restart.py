"""A Redis restarted empty costs no live session: the replicas holding them write their records again."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from replicas import redis_keys, restartable_redis
from serve_project import served_http, write_project
from waits import poll_until

from toolsift.serve._replicas._lease import ReplicaLease
from toolsift.serve._replicas._redis import RedisClient

HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
}
SESSIONS = 8


@asynccontextmanager
async def _two_replicas(tmp_path: Path, redis: str) -> AsyncIterator[list[str]]:
    """The URLs of replicas ``a`` and ``b`` of one project on ``redis``, served in this process (JSON answers)."""
    shared = {"redis": redis, "leaseSeconds": 1}
    config = write_project(tmp_path, serve={"gateway": True, "jsonResponse": True, "shared": shared})
    async with (
        served_http(config, shared={**shared, "replica": "a"}) as (url_a, _),
        served_http(config, shared={**shared, "replica": "b"}) as (url_b, _),
    ):
        yield [url_a, url_b]


async def _session_ids(redis: str) -> list[str]:
    return [key.rsplit(":", 1)[1] for key in await redis_keys(redis, "toolsift:session:*")]


async def _listed(http: httpx2.AsyncClient, url: str, session: str) -> str:
    """What ``builtin__list_directory`` lists for ``session``, asked of the replica at ``url``, or its error."""
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "builtin__list_directory"}}
    answer = await http.post(url, json=call, headers={**HEADERS, "mcp-session-id": session})
    if answer.status_code != 200:
        return f"{answer.status_code}: {answer.text}"
    return "\n".join(block["text"] for block in answer.json()["result"]["content"])


async def test_live_sessions_go_on_on_another_replica_after_redis_restarted_empty(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with (
        restartable_redis() as redis,
        _two_replicas(tmp_path, redis.url) as (url_a, url_b),
        AsyncExitStack() as stack,
    ):
        for _ in range(SESSIONS):  # every session opened, and known only, on replica a
            await stack.enter_async_context(Client(url_a, mode="legacy"))
        sessions = await _session_ids(redis.url)
        with caplog.at_level(logging.WARNING, logger="toolsift.serve"):
            await redis.restart()
            async with httpx2.AsyncClient() as http:
                # At once, before replica a has renewed its lease: b asks for the records, and waits for them.
                listed = [await _listed(http, url_b, session) for session in sessions]
    assert len(sessions) == SESSIONS
    assert all("notes.txt" in answer for answer in listed), listed  # not "Session not found"
    assert "session record(s) to Redis again" in caplog.text


async def test_a_replica_writes_its_records_again_with_no_request_asking(tmp_path: Path) -> None:
    async with (
        restartable_redis() as redis,
        _two_replicas(tmp_path, redis.url) as (url_a, _),
        AsyncExitStack() as stack,
    ):
        for _ in range(SESSIONS):
            await stack.enter_async_context(Client(url_a, mode="legacy"))
        before = await _session_ids(redis.url)
        await redis.restart()

        async def recorded() -> list[str] | None:  # its lease renewal finds the lease gone, and writes them again
            ids = await _session_ids(redis.url)
            return ids if len(ids) == SESSIONS else None

        after = await poll_until(recorded)
    assert sorted(after) == sorted(before) and len(before) == SESSIONS


async def test_a_session_no_replica_holds_is_not_found_after_a_restart_too(tmp_path: Path) -> None:
    async with restartable_redis() as redis, _two_replicas(tmp_path, redis.url) as (_, url_b):
        await redis.restart()
        async with httpx2.AsyncClient() as http:
            missing = await _listed(http, url_b, "f" * 32)
    assert missing.startswith("404") and "Session not found" in missing


async def test_a_lease_found_gone_calls_every_callback_even_past_one_that_fails(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with restartable_redis() as redis:
        pool, renewer = RedisClient(redis.url, prefix="t"), RedisClient(redis.url, prefix="t", max_connections=1)
        lease = ReplicaLease(pool, renewer, "r#1", seconds=0.3)
        called = anyio.Event()

        async def broken() -> None:
            raise RuntimeError("Redis went away again")

        async def written() -> None:
            called.set()

        lease.lapsed += [broken, written]
        try:
            with caplog.at_level(logging.WARNING, logger="toolsift.serve"):
                async with anyio.create_task_group() as group:
                    await group.start(lease.hold)
                    await redis.restart()  # the lease is gone with everything else
                    await called.wait()
                    assert await lease.alive("r#1")  # renewed all the same
                    group.cancel_scope.cancel()
        finally:
            await pool.aclose()
            await renewer.aclose()
    assert "found its lease gone from Redis" in caplog.text
    assert "could not write what it keeps in Redis again: Redis went away again" in caplog.text
