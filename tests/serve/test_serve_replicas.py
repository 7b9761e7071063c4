"""Gateway replicas sharing sessions through a real Redis, behind HAProxy with no stickiness."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx2
import mcp.types as types
from mcp import Client
from replicas import (
    audited,
    call_runner,
    cluster,
    holding_call,
    redis_client,
    redis_keys,
    redis_server,
    release_with,
    waiting_call,
)
from serve_project import general_server, text, write_project
from servers import stop_process, wait_for_file
from waits import poll_until

TESTS = Path(__file__).resolve().parent.parent
MCP_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
}


def _project(
    tmp_path: Path, *, general: Literal["eager", "lazy"] | None = "eager", blocking: bool = False, **serve: object
) -> Path:
    """The test project with ``general`` (and the ``blocking`` server) behind a gateway with shared sessions.

    Each replica starts its own ``general``: a ``lazy`` one only once a call of its needs it.
    """
    servers = {"general": general_server(lazy=general == "lazy")} if general else {}
    if blocking:  # lazy: started by the replicas that need it
        servers["blocking"] = {
            "command": sys.executable,
            "args": [str(TESTS / "blocking_server.py")],
            "internalOnly": False,
            "protocol": "legacy",
            "lazy": True,
        }
    return write_project(
        tmp_path, serve={"shared": {"redis": "redis://unused", "leaseSeconds": 1}, **serve}, servers=servers
    )


def _calls(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The records of each call, by call id, start first."""
    calls: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        calls.setdefault(record["call_id"], []).append(record)
    return calls


def _lost_call(project: Path, records: list[dict[str, Any]], tool: str) -> dict[str, Any]:
    """The one call of ``tool`` that has a start record and no end, in the stream and in the JSON-lines file."""
    (lost,) = [started for started, *ended in _calls(records).values() if started["tool"] == tool and not ended]
    assert lost["kind"] == "tool.started"
    lines = [json.loads(line) for line in (project / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [line["kind"] for line in lines if line["call_id"] == lost["call_id"]] == ["tool.started"]
    return lost


async def test_one_session_is_served_by_every_replica_in_turn_until_the_client_ends_it(tmp_path: Path) -> None:
    # Two replicas take turns as three would: each takes the session up from Redis after the other changed it.
    config = _project(tmp_path)
    async with redis_server() as redis, cluster(config, redis, count=2) as shared:
        async with Client(shared.url, mode="legacy") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"general__echo", "builtin__read_file"} <= names
            for index in range(9):
                assert text(await client.call_tool("general__echo", {"text": f"call {index}"})) == f"call {index}"
            assert all(count >= 3 for count in await shared.balancer.routed())  # no replica was skipped
            (session_id,) = [key.rsplit(":", 1)[1] for key in await redis_keys(redis, "toolsift:session:*")]
        records = await audited(redis, 9)
        # The client sent DELETE on the way out: every replica forgets the session, and Redis too.
        assert await redis_keys(redis, f"toolsift:*{session_id}*") == []
        async with httpx2.AsyncClient(timeout=30) as http:
            for replica in shared.replicas:
                response = await http.post(
                    replica.url,
                    json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
                    headers={**MCP_HEADERS, "mcp-session-id": session_id},
                )
                assert response.status_code == 404, replica.name
                assert response.json()["error"]["message"] == "Session not found"
    calls = _calls(records)
    # Each call: a start record, written before it ran, then its end, by the same replica.
    assert len(calls) == 9 and {tuple(record["kind"] for record in call) for call in calls.values()} == {
        ("tool.started", "tool.executed")
    }
    assert all(started["replica"] == ended["replica"] for started, ended in calls.values())
    assert {record["replica"] for record in records} == {"r0", "r1"}
    assert sorted(ended["arguments"]["text"] for _, ended in calls.values()) == [f"call {i}" for i in range(9)]


async def test_a_call_lost_with_a_killed_replica_runs_again_when_safe_and_the_session_goes_on(tmp_path: Path) -> None:
    config = _project(tmp_path)
    release = tmp_path / "release.txt"
    results: list[str] = []
    # Two replicas: the call runs again on the one left, and the session goes on there.
    async with redis_server() as redis, cluster(config, redis, count=2) as shared:
        async with Client(shared.url, mode="legacy") as client:
            assert text(await client.call_tool("general__echo", {"text": "before"})) == "before"
            async with anyio.create_task_group() as group:
                await group.start(waiting_call, client, "general__wait_for_file", release, results)
                killed = shared.index(await call_runner(redis))
                shared.replicas[killed].process.kill()  # no goodbye: its lease runs out; the balancer skips it
                release_with(release, "released")
            assert results == ["released"]  # read-only: run again on another replica
            for index in range(4):
                assert text(await client.call_tool("general__echo", {"text": f"after {index}"})) == f"after {index}"
        records = await audited(redis, 13)  # six calls that ended, and the one lost with the replica
    # The call lost with the killed replica left its start record; its rerun elsewhere, a start and an end.
    assert _lost_call(tmp_path, records, "general__wait_for_file")["replica"] == f"r{killed}"
    ended = [call for call in _calls(records).values() if len(call) == 2]
    assert len(ended) == 6
    (rerun,) = [call for call in ended if call[0]["tool"] == "general__wait_for_file"]
    assert rerun[0]["replica"] == rerun[1]["replica"] != f"r{killed}"


class ListChanges:
    """A message handler that hears ``tools/list_changed``; ``event`` is set by the next one."""

    def __init__(self) -> None:
        self.event = anyio.Event()

    async def __call__(self, message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.event.set()
            self.event = anyio.Event()


async def test_a_config_change_reaches_every_replica(tmp_path: Path) -> None:
    config = _project(tmp_path, general=None)  # no upstream yet: the change adds one
    async with redis_server() as redis, cluster(config, redis, count=2) as shared, AsyncExitStack() as stack:
        heard = [ListChanges() for _ in shared.replicas]
        # One client on each replica, straight, to hear each announce the change.
        clients = [
            await stack.enter_async_context(Client(replica.url, mode="legacy", message_handler=changes))
            for replica, changes in zip(shared.replicas, heard, strict=True)
        ]
        data = json.loads(config.read_text())
        data.setdefault("tools", {}).setdefault("mcpServers", {})["extra"] = general_server()
        config.write_text(json.dumps(data), encoding="utf-8")
        for changes, client in zip(heard, clients, strict=True):
            while True:
                next_change = changes.event
                if "extra__echo" in [tool.name for tool in (await client.list_tools()).tools]:
                    break
                await next_change.wait()
            assert text(await client.call_tool("extra__echo", {"text": "new"})) == "new"


async def test_uvicorn_workers_are_replicas_of_their_own(tmp_path: Path) -> None:
    config = _project(tmp_path, general=None)  # the workers' own builtin tools: no upstream child each
    ready = tmp_path / "workers.ready"
    async with redis_server() as redis:
        command = [
            sys.executable,
            "-m",
            "toolsift.serve",
            "--config",
            str(config),
            "--transport",
            "http",
            "--port",
            "0",
            "--gateway",
            "--redis",
            redis,
            "--workers",
            "2",
            "--ready-file",
            str(ready),
        ]
        process = await anyio.open_process(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            url = (await wait_for_file(ready, process=process)).strip()
            async with Client(url, mode="legacy") as client:  # answered once a worker has started
                for index in range(6):
                    echoed = await client.call_tool("builtin__exec_shell", {"command": f"echo {index}"})
                    assert f"exit code 0\n{index}\n" in text(echoed)
            records = await audited(redis, 12)
        finally:
            await stop_process(process)
    assert all(record["replica"].rsplit("-", 1)[-1].isdigit() for record in records)  # <hostname>-<pid>


async def test_a_replica_restarted_under_its_name_takes_the_session_up_and_reports_its_lost_call(
    tmp_path: Path,
) -> None:
    config = _project(tmp_path, general="lazy", blocking=True)  # only the restarted replica calls general
    release = tmp_path / "release.txt"
    failure: list[str] = []
    async with redis_server() as redis, cluster(config, redis, count=2) as shared:
        async with Client(shared.url, mode="legacy") as client:
            async with anyio.create_task_group() as group:
                await group.start(holding_call, client, release, failure)
                name = await call_runner(redis)
                slot = shared.index(name)
                shared.replicas[slot].process.kill()
                restarted = await shared.start(name)  # a new run under the old name: not the one that held the call
                await shared.balancer.move(slot, restarted.address)
                await shared.balancer.only(slot)
                before = (await shared.balancer.routed())[slot]
            assert text(await client.call_tool("general__echo", {"text": "back"})) == "back"
        assert (await shared.balancer.routed())[slot] - before >= 2  # the resumed stream and the call after it
        records = await audited(redis, 3)
    assert len(failure) == 1 and f"replica {name!r} running this request stopped" in failure[0]
    assert _lost_call(tmp_path, records, "blocking__hold")["replica"] == name  # it may have run: it is audited


async def test_a_replica_dying_mid_request_costs_its_callers_a_502_and_no_session(tmp_path: Path) -> None:
    # With JSON bodies a call's response is all it sends, so a replica that dies mid-call has sent nothing:
    # the balancer answers 502 (a JSON-RPC error), and each client's session goes on on the other replica.
    config = _project(tmp_path, general="lazy", blocking=True, jsonResponse=True)  # only r1 calls general
    releases = [tmp_path / f"release-{index}.txt" for index in range(6)]
    failures: list[str] = []
    async with redis_server() as redis, cluster(config, redis, count=2) as shared, AsyncExitStack() as stack:
        balancer = shared.balancer
        clients = [await stack.enter_async_context(Client(shared.url, mode="legacy")) for _ in releases]
        async with anyio.create_task_group() as group:
            for index, (client, release) in enumerate(zip(clients, releases, strict=True)):
                await balancer.only(index % 2)  # three calls on each replica
                await group.start(holding_call, client, release, failures)
            await balancer.include(0)
            shared.replicas[0].process.kill()
            await poll_until(lambda: len(failures) >= 3)
            for release in releases:
                release_with(release, "done")
        for index, client in enumerate(clients):
            assert text(await client.call_tool("general__echo", {"text": f"on {index}"})) == f"on {index}"
    assert len(failures) == 3
    assert all("replica serving this request stopped before it answered" in failure for failure in failures)


async def _open_session(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    """Open a session with raw JSON-RPC; the headers its requests carry."""
    opened = await http.post(
        url,
        headers=MCP_HEADERS,
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "burst", "version": "0"},
            },
        },
    )
    headers = {**MCP_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
    await http.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return headers


async def test_two_hundred_concurrent_calls_on_one_replica_all_succeed_after_its_connections_were_killed(
    tmp_path: Path,
) -> None:
    config = _project(tmp_path)
    answers: dict[int, str] = {}
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=None)
    async with (
        redis_server() as redis,
        cluster(config, redis, count=1) as shared,
        httpx2.AsyncClient(timeout=60, limits=limits) as http,
    ):
        url = shared.replicas[0].url
        headers = await _open_session(http, url)

        async def call(index: int) -> None:
            response = await http.post(
                url,
                headers=headers,
                json={
                    "jsonrpc": "2.0",
                    "id": index,
                    "method": "tools/call",
                    "params": {"name": "general__echo", "arguments": {"text": f"burst {index}"}},
                },
            )
            answers[index] = f"{response.status_code} " + (
                "answered" if f"burst {index}" in response.text else response.text[:300]
            )

        async with redis_client(redis) as admin:
            await admin.client_kill_filter(_type="normal")  # every pooled connection of the replica goes stale
        async with anyio.create_task_group() as group:
            for index in range(1, 201):
                group.start_soon(call, index)
        await call(201)  # and the session still hears its answers
    assert Counter(answers.values()) == {"200 answered": 201}
