"""One yes runs one call: an approved retry sent again to another replica or worker is asked again, not run."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from approvals import ASKING, WRITE, YES, executed, retry
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from replicas import redis_client, redis_server
from serve_project import served_http, text, write_project
from servers import stop_process, wait_for_file
from waits import poll_until

from toolsift import ConfigError
from toolsift.config._internal import validate_serve_settings
from toolsift.serve import build_server
from toolsift.serve._state_key import ENV_STATE_KEY
from toolsift.serve._used_approvals import FolderApprovals, ProcessApprovals, UnkeptApprovals, UsedApprovals

TESTS = Path(__file__).resolve().parent.parent
KEY = "k" * 32
STATE_SECONDS = 600.0


async def _yes(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
    return YES


async def _approve_then_replay(first: Client, second: Client) -> list[types.CallToolResult | types.InputRequiredResult]:
    """Ask on ``first``, approve there, then send the same approved retry to ``second`` and to ``first`` again."""
    asked = await retry(first, WRITE)
    assert isinstance(asked, types.InputRequiredResult) and asked.request_state
    done = await retry(first, WRITE, YES, asked.request_state)
    assert isinstance(done, types.CallToolResult) and not done.is_error, done
    return [await retry(client, WRITE, YES, asked.request_state) for client in (second, first)]


async def test_an_approval_replayed_on_another_server_sharing_the_folder_runs_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_STATE_KEY, KEY)
    config = write_project(tmp_path, agents=ASKING, serve={"approvalFolder": "used"})
    one, other = build_server(config), build_server(config)
    async with (
        one,
        other,
        Client(one.sdk, mode="2026-07-28", elicitation_callback=_yes) as first,
        Client(other.sdk, mode="2026-07-28", elicitation_callback=_yes) as second,
    ):
        replays = await _approve_then_replay(first, second)
    assert all(isinstance(replay, types.InputRequiredResult) for replay in replays)  # asked again
    assert executed(tmp_path) == 1
    assert len(list((tmp_path / "used").iterdir())) == 1


async def test_an_approval_replayed_on_another_replica_runs_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_STATE_KEY, KEY)
    async with redis_server() as redis:
        shared = {"redis": redis, "leaseSeconds": 1}
        config = write_project(tmp_path, agents=ASKING, serve={"shared": shared})
        async with (
            served_http(config, shared={**shared, "replica": "a"}) as (url_a, _),
            served_http(config, shared={**shared, "replica": "b"}) as (url_b, _),
            Client(url_a, mode="2026-07-28", elicitation_callback=_yes) as first,
            Client(url_b, mode="2026-07-28", elicitation_callback=_yes) as second,
        ):
            replays = await _approve_then_replay(first, second)
        assert all(isinstance(replay, types.InputRequiredResult) for replay in replays)
        assert executed(tmp_path) == 1
        async with redis_client(redis) as client:
            (key,) = await client.keys("toolsift:approval:*")
            lifetime = await client.pttl(key)
    assert 0 < lifetime <= STATE_SECONDS * 1000  # kept as long as the state lives, then gone


async def test_an_approval_replayed_on_another_worker_runs_once(tmp_path: Path) -> None:
    server = {"command": sys.executable, "args": [str(TESTS / "worker_server.py")], "internalOnly": False}
    config = write_project(tmp_path, agents=ASKING, serve={"gateway": True}, servers={"worker": server})
    ready = tmp_path / "ready"
    command = [sys.executable, "-m", "toolsift.serve", "--config", str(config), "--transport", "http"]
    command += ["--port", "0", "--stateless", "--workers", "2", "--ready-file", str(ready)]
    environ = {key: value for key, value in os.environ.items() if key != ENV_STATE_KEY}  # the run makes its own
    process = await anyio.open_process(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environ
    )
    try:
        url = (await wait_for_file(ready, process=process)).strip()
        async with AsyncExitStack() as stack:
            by_worker: dict[str, Client] = {}

            async def both_workers() -> bool:
                # A connection stays with the worker that accepted it, of the kernel's choosing; each worker
                # starts its own upstream, which names it.
                client = await stack.enter_async_context(Client(url, mode="2026-07-28", elicitation_callback=_yes))
                by_worker.setdefault(text(await client.call_tool("worker__parent", {})), client)
                return len(by_worker) == 2

            await poll_until(both_workers)
            replays = await _approve_then_replay(*by_worker.values())
    finally:
        await stop_process(process)
    assert all(isinstance(replay, types.InputRequiredResult) for replay in replays)
    assert executed(tmp_path) == 1


async def test_a_shared_key_with_no_shared_store_is_said_at_start_and_its_approvals_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(ENV_STATE_KEY, KEY)
    with caplog.at_level(logging.WARNING, logger="toolsift.serve"):
        server = build_server(write_project(tmp_path, agents=ASKING))
    [said] = [record.getMessage() for record in caplog.records if "single-use" in record.getMessage()]
    assert "serve.shared" in said and "serve.approvalFolder" in said
    async with server, Client(server.sdk, mode="2026-07-28", elicitation_callback=_yes) as client:
        refused = await retry(client, WRITE)  # not asked: a yes could run on every server holding the key
    assert isinstance(refused, types.CallToolResult) and refused.is_error
    assert "approvals cannot be kept single-use" in text(refused)
    assert "serve.approvalFolder" in text(refused) and "serve.shared" in text(refused)
    assert not (tmp_path / "ws" / "out.txt").exists()


async def test_a_handshake_era_approval_needs_no_record_and_is_still_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Asked mid-call, the answer comes back on the same request: there is no state to send again.
    monkeypatch.setenv(ENV_STATE_KEY, KEY)
    server = build_server(write_project(tmp_path, agents=ASKING))
    async with server, Client(server.sdk, mode="legacy", elicitation_callback=_yes) as client:
        result = await client.call_tool("builtin__write_file", WRITE)
    assert not result.is_error, text(result)
    assert executed(tmp_path) == 1


async def test_a_store_that_keeps_nothing_never_says_first_use() -> None:
    with pytest.raises(RuntimeError, match="cannot be kept single-use here"):
        await UnkeptApprovals("cannot be kept single-use here").first_use("n", seconds=1)


def test_an_approval_folder_others_may_write_in_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "used"
    folder.mkdir(mode=0o770)
    folder.chmod(0o770)
    with pytest.raises(ConfigError, match="writable by no one else") as raised:
        FolderApprovals(folder)
    assert raised.value.field == "serve.approvalFolder"
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigError, match="serve.approvalFolder"):
        FolderApprovals(tmp_path / "file")


def test_an_approval_folder_is_made_private_and_is_not_for_shared_replicas(tmp_path: Path) -> None:
    FolderApprovals(tmp_path / "a" / "b")
    assert (tmp_path / "a" / "b").stat().st_mode & 0o777 == 0o700
    with pytest.raises(ConfigError, match="approvalFolder is for servers without shared"):
        validate_serve_settings({"shared": {"redis": "redis://x"}, "approvalFolder": str(tmp_path)})


async def test_records_expire_with_the_state_they_guard(tmp_path: Path) -> None:
    now = time.time()
    FolderApprovals(tmp_path)  # made private
    early = FolderApprovals(tmp_path, clock=lambda: now)
    assert await early.first_use("old", seconds=STATE_SECONDS)
    assert not await early.first_use("old", seconds=STATE_SECONDS)
    later = FolderApprovals(tmp_path, clock=lambda: now + 2 * STATE_SECONDS)
    assert await later.first_use("new", seconds=STATE_SECONDS)  # and sweeps the expired record
    assert len(list(tmp_path.iterdir())) == 1
    assert await later.first_use("old", seconds=STATE_SECONDS)  # its state expired long ago: nothing to replay

    clock = [0.0]
    memory = ProcessApprovals(clock=lambda: clock[0])
    assert await memory.first_use("n", seconds=STATE_SECONDS)
    clock[0] = STATE_SECONDS - 1
    assert not await memory.first_use("n", seconds=STATE_SECONDS)
    clock[0] = STATE_SECONDS + 1
    assert await memory.first_use("n", seconds=STATE_SECONDS)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from(["a", "b", "c", "d/..", ""])), max_size=12))
def test_each_nonce_is_a_first_use_once_whichever_server_sees_it(uses: list[tuple[int, str]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        servers: list[UsedApprovals] = [FolderApprovals(Path(folder)) for _ in range(3)]

        async def run() -> list[bool]:
            return [await servers[index].first_use(nonce, seconds=STATE_SECONDS) for index, nonce in uses]

        firsts = anyio.run(run)
    assert firsts == [nonce not in [seen for _, seen in uses[:at]] for at, (_, nonce) in enumerate(uses)]


async def test_a_folder_gone_fails_the_approval_rather_than_run_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = FolderApprovals(tmp_path / "used")
    (tmp_path / "used").rmdir()
    with caplog.at_level(logging.WARNING, logger="toolsift.serve"), pytest.raises(OSError):
        await store.first_use("n", seconds=STATE_SECONDS)
    assert "cannot list the used approvals" in caplog.text
