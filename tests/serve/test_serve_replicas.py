"""Gateway replicas sharing sessions through a real Redis, behind a round-robin proxy with no stickiness."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client
from replicas import (
    audit_records,
    call_runner,
    cluster,
    holding_call,
    redis_keys,
    redis_server,
    release_with,
    waiting_call,
)
from serve_project import general_server, text, write_project
from servers import stop_process, wait_for_file

pytestmark = pytest.mark.timeout(120)

TESTS = Path(__file__).resolve().parent.parent
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-11-25"}


def _project(tmp_path: Path, *, blocking: bool = False) -> Path:
    """The test project with ``general`` (and the ``blocking`` server) behind a gateway with shared sessions."""
    servers = {"general": general_server()}
    if blocking:  # lazy: started by the replicas that need it
        servers["blocking"] = {"command": sys.executable, "args": [str(TESTS / "blocking_server.py")],
                               "internalOnly": False, "protocol": "legacy", "lazy": True}
    return write_project(tmp_path, serve={"shared": {"redis": "redis://unused", "leaseSeconds": 1}},
                         servers=servers)


async def _audited(redis: str, count: int) -> list[dict[str, object]]:
    """The shared audit stream once it holds ``count`` records (records are written after the answer)."""
    with anyio.fail_after(30):
        while len(records := await audit_records(redis)) < count:
            await anyio.sleep(0.02)
    return records


async def test_one_session_is_served_by_every_replica_in_turn_until_the_client_ends_it(tmp_path: Path) -> None:
    config = _project(tmp_path)
    async with redis_server() as redis, cluster(config, redis) as shared:
        async with Client(shared.url, mode="legacy") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"general__echo", "builtin__read_file"} <= names
            for index in range(9):
                assert text(await client.call_tool("general__echo", {"text": f"call {index}"})) == f"call {index}"
            assert all(count >= 3 for count in shared.proxy.routed)  # no replica was skipped
            (session_id,) = [key.rsplit(":", 1)[1] for key in await redis_keys(redis, "toolsift:session:*")]
        records = await _audited(redis, 9)
        # The client sent DELETE on the way out: every replica forgets the session, and Redis too.
        assert await redis_keys(redis, f"toolsift:*{session_id}*") == []
        async with httpx2.AsyncClient(timeout=30) as http:
            for replica in shared.replicas:
                response = await http.post(replica.url, json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
                                           headers={**MCP_HEADERS, "mcp-session-id": session_id})
                assert response.status_code == 404, replica.name
                assert response.json()["error"]["message"] == "Session not found"
    calls = Counter(record["call_id"] for record in records)
    assert len(calls) == 9 and set(calls.values()) == {1}
    assert {record["replica"] for record in records} == {"r0", "r1", "r2"}
    assert sorted(record["arguments"]["text"] for record in records) == [f"call {i}" for i in range(9)]


async def test_a_call_lost_with_a_killed_replica_runs_again_when_safe_and_the_session_goes_on(
        tmp_path: Path) -> None:
    config = _project(tmp_path)
    release = tmp_path / "release.txt"
    results: list[str] = []
    async with redis_server() as redis, cluster(config, redis) as shared:
        async with Client(shared.url, mode="legacy") as client:
            assert text(await client.call_tool("general__echo", {"text": "before"})) == "before"
            async with anyio.create_task_group() as group:
                await group.start(waiting_call, client, "general__wait_for_file", release, results)
                killed = shared.index(await call_runner(redis))
                shared.replicas[killed].process.kill()  # no goodbye: its lease runs out
                shared.proxy.exclude(killed)  # as a balancer's health check would
                release_with(release, "released")
            assert results == ["released"]  # read-only: run again on another replica
            for index in range(4):
                assert text(await client.call_tool("general__echo", {"text": f"after {index}"})) == f"after {index}"
        records = await _audited(redis, 6)
    calls = Counter(record["call_id"] for record in records)
    assert set(calls.values()) == {1}
    rerun = [record for record in records if record["tool"] == "general__wait_for_file"]
    assert len(rerun) == 1 and rerun[0]["replica"] != f"r{killed}"


class ListChanges:
    """A message handler that hears ``tools/list_changed``; ``event`` is set by the next one."""

    def __init__(self) -> None:
        self.event = anyio.Event()

    async def __call__(self, message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.event.set()
            self.event = anyio.Event()


async def test_a_config_change_reaches_every_replica(tmp_path: Path) -> None:
    config = _project(tmp_path)
    async with redis_server() as redis, cluster(config, redis, count=2) as shared, AsyncExitStack() as stack:
        heard = [ListChanges() for _ in shared.replicas]
        # One client on each replica, straight, to hear each announce the change.
        clients = [await stack.enter_async_context(Client(replica.url, mode="legacy", message_handler=changes))
                   for replica, changes in zip(shared.replicas, heard, strict=True)]
        data = json.loads(config.read_text())
        data["tools"]["mcpServers"]["extra"] = general_server()
        config.write_text(json.dumps(data), encoding="utf-8")
        for changes, client in zip(heard, clients, strict=True):
            with anyio.fail_after(60):
                while True:
                    next_change = changes.event
                    if "extra__echo" in [tool.name for tool in (await client.list_tools()).tools]:
                        break
                    await next_change.wait()
            assert text(await client.call_tool("extra__echo", {"text": "new"})) == "new"


async def test_uvicorn_workers_are_replicas_of_their_own(tmp_path: Path) -> None:
    config = _project(tmp_path)
    ready = tmp_path / "workers.ready"
    async with redis_server() as redis:
        command = [sys.executable, "-m", "toolsift.serve", "--config", str(config), "--transport", "http",
                   "--port", "0", "--gateway", "--redis", redis, "--workers", "2", "--ready-file", str(ready)]
        process = await anyio.open_process(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL)
        try:
            url = (await wait_for_file(ready, timeout=30, process=process)).strip()
            async with Client(url, mode="legacy") as client:  # answered once a worker has started
                for index in range(6):
                    assert text(await client.call_tool("general__echo", {"text": str(index)})) == str(index)
            records = await _audited(redis, 6)
        finally:
            await stop_process(process)
    assert all(record["replica"].rsplit("-", 1)[-1].isdigit() for record in records)  # <hostname>-<pid>


async def test_a_replica_restarted_under_its_name_takes_the_session_up_and_reports_its_lost_call(
        tmp_path: Path) -> None:
    config = _project(tmp_path, blocking=True)
    release = tmp_path / "release.txt"
    failure: list[str] = []
    async with redis_server() as redis, cluster(config, redis, count=2) as shared:
        async with Client(shared.url, mode="legacy") as client:
            async with anyio.create_task_group() as group:
                await group.start(holding_call, client, release, failure)
                name = await call_runner(redis)
                shared.replicas[shared.index(name)].process.kill()
                restarted = await shared.start(name)  # a new run under the old name: not the one that held the call
                only = shared.proxy.add(restarted.address)
                for index in range(only):
                    shared.proxy.exclude(index)
            assert text(await client.call_tool("general__echo", {"text": "back"})) == "back"
        assert shared.proxy.routed[only] >= 2  # the resumed stream and the call after it
    assert len(failure) == 1 and f"replica {name!r} running this request stopped" in failure[0]
