"""Shared sessions in this process: two replicas on one Redis, the probes, and every refusal and failure path."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client, MCPError
from mcp_helpers import example_server, in_memory_everywhere, local_server_object
from replicas import (
    Balancer,
    audited,
    call_runner,
    haproxy,
    holding_call,
    redis_client,
    redis_keys,
    redis_server,
    release_with,
    waiting_call,
)
from serve_project import general_server, served_http, text, write_project
from servers import wait_for_file
from waits import poll_until

from toolsift import ConfigError
from toolsift.config._internal import validate_serve_settings
from toolsift.serve import build_server, serve_stdio
from toolsift.serve._server import ToolsiftServer

HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
}


def _config(tmp_path: Path, redis: str, *, upstream: bool = False, **serve: object) -> Path:
    """The test project served with shared sessions; ``upstream``: with the example server ``general`` too."""
    return write_project(
        tmp_path,
        serve={"gateway": True, "shared": {"redis": redis, "leaseSeconds": 1}, **serve},
        servers={"general": general_server()} if upstream else None,
    )


async def _echo(client: Client, word: str) -> bool:
    """Whether ``builtin__exec_shell`` ran ``echo word`` and printed the word."""
    return f"exit code 0\n{word}\n" in text(await client.call_tool("builtin__exec_shell", {"command": f"echo {word}"}))


@dataclass
class _InProcess:
    """Replicas served in this process (URL and server each), and HAProxy in front."""

    served: list[tuple[str, ToolsiftServer]]
    balancer: Balancer

    @property
    def url(self) -> str:
        return self.balancer.url


@asynccontextmanager
async def _replicas(config: Path, *names: str) -> AsyncIterator[_InProcess]:
    """Replicas of ``config`` served in this process, behind HAProxy with the example's config."""
    async with anyio.create_task_group() as group:
        served = []
        for name in names:
            server = _replica(config, name)
            served.append((await group.start(_serve, server), server))
        try:
            async with haproxy([_address(url) for url, _ in served], config.parent / "balancer") as balancer:
                yield _InProcess(served, balancer)
        finally:
            group.cancel_scope.cancel()


async def _serve(server: ToolsiftServer, *, task_status: anyio.abc.TaskStatus[str]) -> None:
    from toolsift.serve import serve_http

    await serve_http(server, task_status=task_status)


def _replica(config: Path, name: str) -> ToolsiftServer:
    """A server of ``config`` (whose ``serve.shared`` is set) named ``name`` in Redis."""
    shared = json.loads(config.read_text())["serve"]["shared"]
    return build_server(config, transport="http", port=0, shared={**shared, "replica": name})


def _address(url: str) -> tuple[str, int]:
    host, _, port = url.split("//", 1)[1].split("/", 1)[0].rpartition(":")
    return host, int(port)


async def test_two_replicas_in_one_process_share_a_session(tmp_path: Path) -> None:
    async with redis_server() as redis:
        async with (
            _replicas(_config(tmp_path, redis), "a", "b") as replicas,
            Client(replicas.url, mode="legacy") as client,
        ):
            for index in range(4):
                assert await _echo(client, f"call{index}")
        records = await audited(redis, 8)
    # Each call's start, then its end, from the replica that ran it.
    assert [record["kind"] for record in records] == ["tool.started", "tool.executed"] * 4
    assert {record["replica"] for record in records} == {"a", "b"}


async def _lose_lease(redis: str, replica: str) -> None:
    """Make ``replica`` count as gone, as a replica cut off from Redis would (its lease is long: not renewed)."""
    async with redis_client(redis) as client:
        await client.delete(*await client.keys(f"toolsift:replica:{replica}#*"))


async def test_streams_resume_on_the_other_replica_and_a_lost_call_runs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_memory_everywhere(monkeypatch, {"general": example_server("general.py")})  # the replicas' ways are the point
    release, again = tmp_path / "release.txt", tmp_path / "again.txt"
    results: list[str] = []
    async with (
        redis_server() as redis,
        _replicas(
            _config(tmp_path, redis, upstream=True, shared={"redis": redis, "leaseSeconds": 60}), "a", "b"
        ) as replicas,
        Client(replicas.url, mode="legacy") as client,
    ):
        balancer = replicas.balancer
        # A stream cut while its replica still runs the call: it resumes on the other, which follows Redis.
        async with anyio.create_task_group() as group:
            await group.start(waiting_call, client, "general__wait_for_file", release, results)
            runner = "ab".index(await call_runner(redis))
            await balancer.exclude(runner)
            await balancer.cut(runner)
            release_with(release, "released")
        await balancer.include(runner)
        # The replica running a call loses its lease: the read-only call runs again on the other.
        async with anyio.create_task_group() as group:
            await group.start(waiting_call, client, "general__wait_for_file", again, results)
            name = await call_runner(redis)
            await balancer.exclude("ab".index(name))
            await balancer.cut("ab".index(name))
            await _lose_lease(redis, name)
            await poll_until(lambda: redis_keys(redis, "toolsift:rerun:*"))  # released once the other claimed it
            release_with(again, "again")
    assert results == ["released", "again"]


async def test_probes_say_whether_a_replica_can_serve(tmp_path: Path) -> None:
    async with redis_server() as redis:
        config = _config(tmp_path, redis, token="secret")
        async with _replicas(config, "probe") as replicas, httpx2.AsyncClient(timeout=30) as http:
            url = replicas.served[0][0]
            base = url.removesuffix("/mcp")
            health = await http.get(f"{base}/healthz")  # no token needed
            ready = await http.get(f"{base}/readyz")
            refused = await http.post(url, json={}, headers=HEADERS)
            assert (health.status_code, health.json()) == (200, {"status": "ok", "replica": "probe"})
            assert (ready.status_code, ready.json()) == (200, {"status": "ready", "replica": "probe"})
            assert refused.status_code == 401
            await redis_down(redis)
            gone = await http.get(f"{base}/readyz")
            assert (gone.status_code, gone.json()["status"]) == (503, "redis unreachable")


async def redis_down(url: str) -> None:
    """Stop the Redis at ``url`` (SHUTDOWN NOSAVE)."""
    from redis.exceptions import ConnectionError as RedisConnectionError

    async with redis_client(url) as client:
        with contextlib.suppress(RedisConnectionError):  # it closes the connection as it goes
            await client.shutdown(nosave=True)


async def test_a_single_process_has_probes_too(tmp_path: Path) -> None:
    async with served_http(write_project(tmp_path)) as (url, _), httpx2.AsyncClient(timeout=30) as http:
        base = url.removesuffix("/mcp")
        assert (await http.get(f"{base}/healthz")).json() == {"status": "ok"}
        assert (await http.get(f"{base}/readyz")).json() == {"status": "ready"}


async def test_an_unknown_session_and_malformed_ids_are_refused(tmp_path: Path) -> None:
    async with (
        redis_server() as redis,
        _replicas(_config(tmp_path, redis), "a") as replicas,
        Client(replicas.url, mode="legacy") as client,
        httpx2.AsyncClient(timeout=30) as http,
    ):
        url = replicas.served[0][0]
        await client.call_tool("builtin__list_directory", {})
        (key,) = await redis_keys(redis, "toolsift:session:*")
        session = key.rsplit(":", 1)[1]
        unknown = await http.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={**HEADERS, "mcp-session-id": "nope"}
        )
        assert unknown.status_code == 404
        # A Last-Event-ID this store never gave out: the SDK's GET stream answers, with nothing to replay.
        async with http.stream(
            "GET", url, headers={**HEADERS, "mcp-session-id": session, "last-event-id": "not-an-id"}
        ) as stream:
            assert stream.status_code == 200
        no_session = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=HEADERS)
        assert no_session.status_code == 400


async def test_a_session_can_be_answered_by_json_bodies(tmp_path: Path) -> None:
    async with redis_server() as redis:
        config = _config(tmp_path, redis, jsonResponse=True)
        async with _replicas(config, "a", "b") as replicas, Client(replicas.url, mode="legacy") as client:
            assert "notes.txt" in text(await client.call_tool("builtin__list_directory", {}))
            assert await _echo(client, "json")


async def test_modern_clients_need_no_session(tmp_path: Path) -> None:
    async with (
        redis_server() as redis,
        _replicas(_config(tmp_path, redis), "a", "b") as replicas,
        Client(replicas.url, mode="2026-07-28") as client,
    ):
        assert await _echo(client, "modern")
        assert await _echo(client, "again")


async def test_an_unreachable_redis_stops_the_start_with_the_url_and_no_password(tmp_path: Path) -> None:
    config = write_project(tmp_path, serve={"shared": {"redis": "redis://:hunter2@127.0.0.1:1/0"}})
    server = build_server(config, transport="http", port=0)
    with pytest.raises(ConfigError, match=r"cannot reach Redis at redis://:\*\*\*@127\.0\.0\.1:1/0") as caught:
        async with server:
            pass
    assert "hunter2" not in str(caught.value) and "hunter2" not in repr(server.shared)


async def test_stdio_refuses_shared_sessions(tmp_path: Path) -> None:
    server = build_server(write_project(tmp_path, serve={"shared": {"redis": "redis://127.0.0.1:1"}}))
    with pytest.raises(ConfigError, match="shared sessions are served over HTTP"):
        await serve_stdio(server)


@pytest.mark.parametrize(
    ("serve", "message"),
    [
        ({"shared": {"redis": "http://x"}}, "expected a URL starting with redis://"),
        ({"shared": {"redis": "redis://x"}, "stateless": True}, "shared and stateless exclude each other"),
        (
            {"shared": {"redis": "redis://x", "replica": "one"}, "workers": 2, "transport": "http"},
            "each worker is a replica with a name of its own",
        ),
        ({"shared": {"redis": "redis://x", "replica": "a b"}}, "serve.shared.replica"),
        ({"shared": {"redis": "redis://x", "maxBatchMessages": 0}}, "serve.shared.maxBatchMessages"),
        ({"shared": {}}, "serve.shared.redis"),
        ({"workers": 2}, "needs stateless = true, or shared sessions"),
    ],
)
def test_shared_settings_refuse_what_cannot_work(serve: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        validate_serve_settings(serve)


def test_shared_settings_expand_variables_and_allow_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://:pw@db:6379/2")
    settings = validate_serve_settings({"shared": {"redis": "${REDIS_URL}"}, "workers": 3, "transport": "http"})
    assert settings.shared is not None and settings.shared.redis.get_secret_value() == "redis://:pw@db:6379/2"
    assert "pw" not in repr(settings.shared)
    assert (
        settings.shared.key_prefix,
        settings.shared.replica,
        settings.shared.lease_seconds,
        settings.shared.max_batch_messages,
    ) == ("toolsift", None, 10.0, 100)


async def test_answers_reach_the_replica_that_asked_and_unlocks_follow_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The approval (elicitation) and the upstream's sampling request are answered by POSTs that the balancer
    # is made to send to the replica not running the call; the search's list_changed comes from one replica
    # while the client's GET stream may be open on the other; what it unlocked is callable on both.
    session_server = Path(__file__).resolve().parent.parent / "session_server.py"
    agents = {"default": {"permissions": {"level": "execute", "ask": ["write_file"]}}}
    servers = {
        "general": general_server(internalOnly=True),
        "session": {
            "command": sys.executable,
            "args": [str(session_server)],
            "internalOnly": False,
            "protocol": "legacy",
        },
    }
    # Both replicas reach the upstreams in this process: the answers' way between the replicas is the point.
    in_memory_everywhere(
        monkeypatch, {"general": example_server("general.py"), "session": local_server_object("session_server.py")}
    )
    changes = anyio.Event()
    asked: list[str] = []

    async def notice(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changes.set()

    async with redis_server() as redis:
        config = write_project(
            tmp_path, agents=agents, servers=servers, serve={"gateway": True, "shared": {"redis": redis}}
        )
        async with _replicas(config, "a", "b") as replicas:

            async def elsewhere() -> None:
                await replicas.balancer.include(0)
                await replicas.balancer.include(1)
                await replicas.balancer.exclude("ab".index(await call_runner(redis)))

            async def approve(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
                asked.append(params.message)
                await elsewhere()
                return types.ElicitResult(action="accept", content={"approve": True})

            async def sample(
                context: object,
                params: types.CreateMessageRequestParams,
            ) -> types.CreateMessageResult:
                await elsewhere()
                return types.CreateMessageResult(
                    role="assistant", content=types.TextContent(text="forty-two"), model="m"
                )

            async with Client(
                replicas.url,
                mode="legacy",
                message_handler=notice,
                sampling_callback=sample,
                elicitation_callback=approve,
            ) as client:
                for index in range(2):
                    written = await client.call_tool("builtin__write_file", {"path": f"{index}.txt", "content": "hi"})
                    assert not written.is_error, text(written)
                    assert text(await client.call_tool("session__ask", {"question": "2+2?"})) == "forty-two"
                await replicas.balancer.include(0)
                await replicas.balancer.include(1)
                found = await client.call_tool("search_tools", {"query": "add two integers"})
                assert (found.structured_content or {})["unlocked"] == ["general__add"]
                await changes.wait()
                for index in range(2):  # one call on each replica
                    assert "general__add" in [tool.name for tool in (await client.list_tools()).tools]
                    assert text(await client.call_tool("general__add", {"a": index, "b": 1})) == str(index + 1)
            async with Client(replicas.url, mode="legacy") as other:  # another session unlocked nothing
                assert "denied at layer 1" in text(await other.call_tool("general__add", {"a": 2, "b": 2}))
    assert len(asked) == 2 and asked[0].startswith("Approve write_file")
    assert sorted(path.name for path in (tmp_path / "ws").glob("?.txt")) == ["0.txt", "1.txt"]


async def test_a_cancel_posted_on_another_replica_reaches_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker, release = tmp_path / "cancelled.txt", tmp_path / "never.txt"
    # The upstream runs in this process, where it reads its marker's path from this environment.
    monkeypatch.setenv("TOOLSIFT_CANCEL_MARKER", str(marker))
    in_memory_everywhere(monkeypatch, {"general": example_server("general.py")})
    async with redis_server() as redis:
        config = write_project(
            tmp_path,
            serve={"gateway": True, "shared": {"redis": redis}},
            servers={"general": general_server()},
        )
        async with (
            _replicas(config, "a", "b") as replicas,
            Client(replicas.url, mode="legacy") as client,
            anyio.create_task_group() as group,
        ):
            running = anyio.Event()

            async def progress(done: float, total: float | None, message: str | None) -> None:
                running.set()

            async def call(*, task_status: anyio.abc.TaskStatus[anyio.CancelScope]) -> None:
                with anyio.CancelScope() as scope:
                    task_status.started(scope)
                    await client.call_tool("general__wait_for_file", {"path": str(release)}, progress_callback=progress)

            scope = await group.start(call)
            await running.wait()
            await replicas.balancer.exclude("ab".index(await call_runner(redis)))
            scope.cancel()  # the client posts notifications/cancelled, to the replica not running the call
            assert (await wait_for_file(marker)).strip() == "CANCELLED wait_for_file"


async def test_a_lost_call_is_reported_when_not_safe_to_repeat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    in_memory_everywhere(monkeypatch, {"blocking": local_server_object("blocking_server.py")})
    blocking = Path(__file__).resolve().parent.parent / "blocking_server.py"
    release = tmp_path / "release.txt"
    failures: list[str] = []
    async with redis_server() as redis:
        config = write_project(
            tmp_path,
            serve={"gateway": True, "shared": {"redis": redis, "leaseSeconds": 60}},
            servers={
                "blocking": {
                    "command": sys.executable,
                    "args": [str(blocking)],
                    "internalOnly": False,
                    "protocol": "legacy",
                    "lazy": True,
                }
            },
        )
        async with (
            _replicas(config, "a", "b") as replicas,
            Client(replicas.url, mode="legacy") as client,
            anyio.create_task_group() as group,
        ):
            await group.start(holding_call, client, release, failures)
            runner = await call_runner(redis)
            await replicas.balancer.exclude("ab".index(runner))
            await replicas.balancer.cut("ab".index(runner))
            await _lose_lease(redis, runner)
    assert len(failures) == 1
    assert "stopped before it answered; the call may or may not have run, so it was not repeated" in failures[0]


async def test_audit_records_wait_for_redis_and_say_what_was_lost(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolsift.registry import AuditLog
    from toolsift.registry._internal import AuditEvent
    from toolsift.serve._replicas import _audit
    from toolsift.serve._replicas._redis import RedisClient

    monkeypatch.setattr(_audit, "MAX_QUEUED", 2)
    monkeypatch.setattr(_audit, "_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(_audit, "_FLUSH_SECONDS", 0.5)
    log = AuditLog()
    stream = _audit.AuditStream(RedisClient("redis://127.0.0.1:1/0", prefix="t"), "lonely", log)
    event = AuditEvent(kind="tool.executed", tool="x", outcome="ok", call_id="1", duration_ms=1.0)
    async with anyio.create_task_group() as group:
        await group.start(stream.run)
        for _ in range(3):
            log.emit(event)
        await poll_until(lambda: "could not write audit records to Redis" in caplog.text)
        group.cancel_scope.cancel()
    assert "dropping some from the stream" in caplog.text
    assert "2 audit records did not reach Redis" in caplog.text
    await stream.redis.aclose()


async def test_a_flush_says_when_records_cannot_reach_redis(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolsift.registry import AuditLog
    from toolsift.registry._internal import AuditEvent
    from toolsift.serve._replicas import _audit
    from toolsift.serve._replicas._redis import RedisClient

    monkeypatch.setattr(_audit, "MAX_QUEUED", 2)
    monkeypatch.setattr(_audit, "START_WAIT_SECONDS", 0.05)
    monkeypatch.setattr(_audit, "_FLUSH_SECONDS", 0.1)
    log = AuditLog(record_starts=True)
    stream = _audit.AuditStream(RedisClient("redis://127.0.0.1:1/0", prefix="t"), "lonely", log)
    event = AuditEvent(kind="tool.started", tool="x", outcome="started", call_id="1", duration_ms=1.0)
    async with anyio.create_task_group() as group:
        await group.start(stream.run)
        log.emit(event)
        with pytest.raises(TimeoutError, match="audit records did not reach Redis within 0.05s"):
            await log.flush()
        log.emit(event)
        with pytest.raises(TimeoutError, match="the queue is full"):
            await log.flush()
        group.cancel_scope.cancel()
    await stream.redis.aclose()


async def test_a_replica_full_of_sessions_refuses_more(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolsift.serve._replicas import _manager

    monkeypatch.setattr(_manager, "MAX_SESSIONS", 1)
    async with (
        redis_server() as redis,
        _replicas(_config(tmp_path, redis), "a") as replicas,
        Client(replicas.url, mode="legacy") as client,
        httpx2.AsyncClient(timeout=30) as http,
    ):
        await client.call_tool("builtin__list_directory", {})
        refused = await http.post(
            replicas.served[0][0],
            headers=HEADERS,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "x", "version": "0"},
                },
            },
        )
        assert (refused.status_code, refused.json()["error"]["message"]) == (503, "Too many open sessions")
        assert "notes.txt" in text(await client.call_tool("builtin__list_directory", {}))


def test_bodies_are_told_apart_without_mistaking_malformed_ones() -> None:
    from toolsift.serve._replicas._bodies import json_of, routed, tool_calls

    answer = {"jsonrpc": "2.0", "id": 7, "result": {}}
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8}}
    call = {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "x"}}
    assert json_of(b"{not json") is None and routed(None) is None
    assert routed(answer) == [answer] and routed([answer, cancel]) == [answer, cancel]
    assert routed([answer, call]) is None and routed([]) is None and routed([1]) is None
    assert routed({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert routed({"id": 1, "result": 5, "bogus": True, "jsonrpc": "1.0"}) is None  # not JSON-RPC 2.0
    assert tool_calls([call, answer, {"method": "tools/call"}]) == {"8": json.dumps(call)}


async def test_each_replica_numbers_its_requests_to_the_client_from_its_own_random_start() -> None:
    # Answers go to every replica serving the session, so two replicas must never wait on the same id.
    from mcp.shared.message import SessionMessage

    from toolsift.serve._replicas._channels import SharedDispatcher

    async def ignore(*args: object) -> None:
        return None

    first_ids = []
    for _ in range(2):
        to_client, written = anyio.create_memory_object_stream[SessionMessage](4)
        from_client, read = anyio.create_memory_object_stream[SessionMessage | Exception](4)
        dispatcher = SharedDispatcher(read, to_client)
        async with anyio.create_task_group() as group, from_client, written:
            await group.start(dispatcher.run, ignore, ignore)
            group.start_soon(dispatcher.send_raw_request, "ping", None)
            first_ids.append((await written.receive()).message.id)
            group.cancel_scope.cancel()
    assert first_ids[0] != first_ids[1] and all(isinstance(i, int) and i > 1 for i in first_ids)


async def test_a_store_failure_fails_one_message_and_the_session_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Redis refuses to store events (here by ACL, as a failing or full Redis would) while a call runs.
    in_memory_everywhere(monkeypatch, {"general": example_server("general.py")})
    release = tmp_path / "release.txt"
    results: list[str] = []
    async with (
        redis_server() as redis,
        _replicas(_config(tmp_path, redis, upstream=True), "a") as replicas,
        Client(replicas.url, mode="legacy") as client,
        redis_client(redis) as admin,
    ):
        await client.list_tools()  # the client checks results against the tools' schemas: known from now on
        async with anyio.create_task_group() as group:
            await group.start(waiting_call, client, "general__wait_for_file", release, results)
            await admin.execute_command("ACL", "SETUSER", "default", "-xadd")
            release_with(release, "released")  # its answer cannot be stored: it is sent all the same
        # A request whose stream cannot be stored is refused before it runs, with an error.
        with pytest.raises(MCPError, match="Error handling POST request"):
            await client.call_tool("general__echo", {"text": "refused"})
        await admin.execute_command("ACL", "SETUSER", "default", "+xadd")
        assert text(await client.call_tool("general__echo", {"text": "again"})) == "again"
    assert results == ["released"]


async def test_a_replica_whose_connections_are_all_taken_keeps_its_lease() -> None:
    from toolsift.config._internal import SharedSettings
    from toolsift.registry import AuditLog
    from toolsift.serve._replicas import SharedState

    async with redis_server() as redis:
        settings = SharedSettings.model_validate({"redis": redis, "replica": "busy", "leaseSeconds": 0.6})
        state = SharedState(settings, AuditLog())
        async with state.running(), redis_client(redis) as observer:
            pool = state.redis.redis.connection_pool
            taken = [await pool.get_connection() for _ in range(pool.max_connections)]
            key = f"toolsift:replica:{state.instance}"
            renewals, previous = 0, await observer.pttl(key)

            async def renewed_twice() -> bool:
                nonlocal renewals, previous
                current = await observer.pttl(key)
                renewals += current > previous  # its time to live went up: renewed
                previous = current
                return renewals >= 2

            await poll_until(renewed_twice)
            assert await observer.exists(key)
            for connection in taken:
                await pool.release(connection)


async def test_too_many_messages_or_too_deep_a_body_are_refused_before_any_replica_reads_them(tmp_path: Path) -> None:
    async with redis_server() as redis:
        config = _config(tmp_path, redis, shared={"redis": redis, "maxBatchMessages": 3})
        async with (
            _replicas(config, "a", "b") as replicas,
            Client(replicas.url, mode="legacy") as client,
            httpx2.AsyncClient(timeout=30) as http,
            redis_client(redis) as watcher,
        ):
            await client.list_tools()
            (key,) = await redis_keys(redis, "toolsift:session:*")
            headers = {**HEADERS, "mcp-session-id": key.rsplit(":", 1)[1]}
            url = replicas.served[0][0]
            answers = watcher.pubsub(ignore_subscribe_messages=True)
            await answers.subscribe("toolsift:answers")
            answer = {"jsonrpc": "2.0", "id": 7, "result": {}}
            refused = await http.post(url, headers=headers, json=[answer] * 4)
            accepted = await http.post(url, headers=headers, json=[answer] * 3)
            deep = await http.post(
                url,
                headers=headers,
                content=b'{"jsonrpc": "2.0", "id": 7, "result": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            )
            published = await anext(answers.listen())  # the first message published
            await answers.aclose()
    assert (refused.status_code, refused.json()["error"]["message"]) == (
        413,
        "A POST body may carry at most 3 JSON-RPC messages (serve.shared.maxBatchMessages); this one carries 4",
    )
    assert accepted.status_code == 202
    assert len(json.loads(published["data"])["messages"]) == 3  # the refused batch was never published
    # As one process answers it: the SDK's parser stops at its nesting limit.
    assert deep.status_code == 400 and deep.json()["error"]["message"].startswith("Parse error: recursion limit")
