"""Crashes, restarts and giving up; timeouts and cancellation that reach the server; drain and close."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from anyio.abc import TaskStatus
from mcp_helpers import FAST, example_server, in_memory, local_server, stdio_server, wait_for, wait_for_state
from servers import http_server, wait_for_file
from waits import CHILD_SECONDS, poll_until

from toolsift import ServerDraining, ServerUnavailable
from toolsift.config import HttpServer
from toolsift.mcp_sessions import McpSession, McpSessionGroup, SessionOptions
from toolsift.mcp_sessions._internal import SessionState
from toolsift.mcp_sessions._options import RestartPolicy
from toolsift.mcp_sessions._session import SessionEvent
from toolsift.registry import ToolRegistry, ToolResult

CANCELLED = "CANCELLED slow\n"


def cancel_marker_in_process(monkeypatch: pytest.MonkeyPatch, folder: Path) -> Path:
    """Where ``general.py`` run in this process marks the calls it sees cancelled (its config's ``env`` reaches
    only a child; a cancellation over stdio is test_session_caller_cancellation_reaches_the_server's)."""
    marker = folder / "cancelled"
    monkeypatch.setenv("TOOLSIFT_CANCEL_MARKER", str(marker))
    return marker


def text(result: ToolResult, index: int = 0) -> str:
    block = result.content[index]
    assert isinstance(block, types.TextContent)
    return block.text


def test_restart_policy_doubles_from_one_second_to_thirty() -> None:
    policy = RestartPolicy()
    assert [policy.delay(n) for n in range(1, 9)] == [1, 2, 4, 8, 16, 30, 30, 30]


async def test_session_restarts_a_crashed_server_then_pauses_when_its_budget_is_spent() -> None:
    registry = ToolRegistry()
    config = local_server("crashy", "raw_server.py", max_restarts=2, internal_only=False, protocol="legacy")
    states: list[SessionState] = []
    async with McpSession(config, registry=registry, options=FAST) as session:
        session.subscribe(lambda event: states.append(event.state) if event.kind == "state" else None)
        plans = []
        for _ in range(3):
            result = await registry.execute("crashy__crash", {})
            assert result.is_error and result.meta["mcp_failure"] == "crash"
            plans.append(text(result))
            await wait_for_state(session, SessionState.READY, SessionState.ERROR)
        assert plans[0] == (
            "MCP server 'crashy' crashed during tool 'crash': the connection closed before it "
            "answered; it is being restarted; the call was not retried."
        )
        assert re.search(
            r"it had 2 restarts within 300s \(maxRestarts=2\), so it is started again in \d+s; "
            r"the call was not retried\.$",
            plans[2],
        )
        assert session.state is SessionState.ERROR and session.restarts == 2
        assert session.reason is not None
        assert re.search(r"; 2 restarts within 300s \(maxRestarts=2\): starting it again in \d+s$", session.reason)
        assert "crashy" not in registry.servers()
        with pytest.raises(ServerUnavailable, match="'crashy' is down: .*2 restarts within 300s"):
            await session.call_tool("ping")
    assert states.count(SessionState.READY) == 2 and states[-1] is SessionState.CLOSED


async def test_session_calls_during_a_restart_fail_fast() -> None:
    slow_restart = SessionOptions(restart=RestartPolicy(initial_delay=30))
    config = local_server("crashy", "raw_server.py", protocol="legacy")
    async with McpSession(config, options=slow_restart) as session:
        await session.call_tool("crash")
        assert session.state is SessionState.RESTARTING
        await wait_for(session, lambda s: "restart 1 of 5" in (s.reason or ""))
        expected = r"'crashy' is restarting: .*; restart 1 of 5 in 30s"
        # Refused rather than held: a call that waited for the restart would get the server's answer.
        with pytest.raises(ServerUnavailable, match=expected):
            await session.call_tool("ping")


async def test_session_without_restart_on_crash_fails_for_good() -> None:
    config = stdio_server("crashy", "faulty.py", "--crash-after", "1", restart_on_crash=False)
    async with McpSession(config, options=FAST) as session:
        assert text(await session.call_tool("echo", {"text": "ok"})) == "ok"
        result = await session.call_tool("echo", {"text": "x"})
        assert text(result).endswith("it will not be restarted (restartOnCrash is off).")
        await wait_for_state(session, SessionState.ERROR)
        # Whichever the session noticed first: the call's closed connection or the end of the output.
        assert session.reason is not None and session.reason.endswith("; not restarted (restartOnCrash is off)")


async def test_session_notices_a_server_that_exits_between_calls_and_restarts_it() -> None:
    async with McpSession(local_server("local", "session_server.py", max_restarts=1), options=FAST) as session:
        assert text(await session.call_tool("exit_soon")) == "bye"
        await wait_for_state(session, SessionState.RESTARTING)
        assert session.reason is not None and session.reason.startswith("the server's output ended")
        await wait_for_state(session, SessionState.READY)
        assert session.restarts == 1
        assert text(await session.call_tool("exit_soon")) == "bye"


async def test_session_long_healthy_connection_resets_the_restart_count() -> None:
    options = SessionOptions(restart=RestartPolicy(initial_delay=0.01, stable_after=0))
    config = local_server("crashy", "raw_server.py", max_restarts=1, protocol="legacy")
    async with McpSession(config, options=options) as session:
        for _ in range(3):
            await session.call_tool("crash")
            await wait_for_state(session, SessionState.READY, SessionState.ERROR)
            assert session.state is SessionState.READY
        assert session.restarts == 3


async def test_session_loses_an_http_server_and_pauses_reconnecting() -> None:
    stop = anyio.Event()

    async def serve(*, task_status: TaskStatus[str]) -> None:
        async with http_server("notes_http.py") as url:
            task_status.started(url)
            await stop.wait()

    async with anyio.create_task_group() as group:
        url = await group.start(serve)
        config = HttpServer(url=url, max_restarts=1, timeout=CHILD_SECONDS).with_name("notes")
        async with McpSession(config, options=FAST) as session:
            assert not (await session.call_tool("note_list")).is_error
            stop.set()
            await wait_until_closed(url)
            result = await session.call_tool("note_list")
            assert result.meta["mcp_failure"] == "crash"
            assert text(result).startswith(
                "MCP server 'notes' dropped the connection during tool 'note_list' (it stopped or the network failed)"
            )
            await wait_for_state(session, SessionState.ERROR)
            assert session.reason is not None
            assert re.fullmatch(
                f"cannot reach {re.escape(repr(url))}: ConnectError: All connection attempts failed; "
                r"1 restart within 300s \(maxRestarts=1\): starting it again in \d+s",
                session.reason,
            )


async def wait_until_closed(url: str) -> None:
    """Wait until nothing accepts connections at ``url`` any more."""
    port = int(url.rsplit(":", 1)[1].split("/")[0])

    async def refused() -> bool:
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            return True
        await stream.aclose()
        return False

    await poll_until(refused)


async def test_session_tool_timeout_cancels_the_call_on_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = cancel_marker_in_process(monkeypatch, tmp_path)
    config = stdio_server("general", "general.py", env={"TOOLSIFT_CANCEL_MARKER": str(marker)}, tool_timeout=0.3)
    async with McpSession(config, options=in_memory({"general": example_server("general.py")})) as session:
        result = await session.call_tool("slow", {"seconds": 30})
        assert result.meta["mcp_failure"] == "timeout"
        assert await wait_for_file(marker) == CANCELLED
        assert text(await session.call_tool("echo", {"text": "after"})) == "after"


async def test_session_caller_cancellation_reaches_the_server(tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    registry = ToolRegistry()
    config = stdio_server("general", "general.py", env={"TOOLSIFT_CANCEL_MARKER": str(marker)}, internal_only=False)
    async with McpSession(config, registry=registry) as session:
        running = anyio.Event()

        async def under_way(done: float, total: float | None, message: str | None) -> None:
            running.set()

        never = {"path": str(tmp_path / "never")}
        async with anyio.create_task_group() as group:
            group.start_soon(partial(registry.execute, "general__wait_for_file", never, progress=under_way))
            await running.wait()  # the server is running the call: cancelling now must reach it
            group.cancel_scope.cancel()
        assert await wait_for_file(marker) == "CANCELLED wait_for_file\n"
        assert session.in_flight == 0
        timed = await registry.execute("general__slow", {"seconds": 30}, timeout=0.2)
        assert timed.is_error and "timed out after 0.2s" in text(timed)


async def test_session_drain_lets_running_calls_finish_and_refuses_new_ones() -> None:
    registry = ToolRegistry()
    config = stdio_server("general", "general.py", internal_only=False)
    options = in_memory({"general": example_server("general.py")})
    async with McpSession(config, registry=registry, options=options) as session:
        finished: list[ToolResult] = []
        started = anyio.Event()

        async def slow_call() -> None:
            started.set()
            finished.append(await session.call_tool("slow", {"seconds": 0.5}))

        async with anyio.create_task_group() as group:
            group.start_soon(slow_call)
            await started.wait()
            await anyio.wait_all_tasks_blocked()
            group.start_soon(session.drain, 10)
            await wait_for_state(session, SessionState.DRAINING)
            assert registry.servers() == []
            with pytest.raises(ServerDraining, match="'general' is draining"):
                await session.call_tool("echo", {"text": "x"})
        assert text(finished[0]) == "slept 0.5"
        assert session.state is SessionState.CLOSED


async def test_session_drain_deadline_cancels_what_still_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = cancel_marker_in_process(monkeypatch, tmp_path)
    config = stdio_server("general", "general.py", env={"TOOLSIFT_CANCEL_MARKER": str(marker)})
    async with McpSession(config, options=in_memory({"general": example_server("general.py")})) as session:
        results: list[ToolResult] = []
        async with anyio.create_task_group() as group:

            async def call() -> None:
                results.append(await session.call_tool("slow", {"seconds": 30}))

            group.start_soon(call)
            await anyio.wait_all_tasks_blocked()
            await session.drain(0.2)
        assert results[0].is_error and results[0].meta["mcp_failure"] == "cancelled"
        assert text(results[0]) == (
            "Tool 'slow' of MCP server 'general' was cancelled while it ran: "
            "the session was drained: its server was removed or changed."
        )
        assert await wait_for_file(marker) == CANCELLED
        with pytest.raises(ServerUnavailable, match="'general' is closed: the session was drained"):
            await session.call_tool("echo", {"text": "x"})


async def test_group_replace_hands_over_and_keeps_the_replacements_tools() -> None:
    registry = ToolRegistry()
    config = stdio_server("general", "general.py", internal_only=False)
    events: list[SessionEvent] = []
    async with McpSessionGroup(
        registry, options=in_memory({"general": example_server("general.py")}), drain_seconds=5
    ) as group:
        old = await group.add(config)
        assert old is not None
        old.subscribe(events.append)
        new = group.replace(config.model_copy(update={"tool_timeout": 5.0}))
        assert new is not None and new is not old and group["general"] is old and group.starting == {"general": new}
        await new.wait_settled()
        assert group["general"] is new and group.starting == {}
        await wait_for_state(old, SessionState.CLOSED)
        assert {t.session for t in registry.tools(server="general")} == {new}  # type: ignore[attr-defined]
    assert [e.state for e in events if e.kind == "state"] == [
        SessionState.DRAINING,
        SessionState.CLOSING,
        SessionState.CLOSED,
    ]
