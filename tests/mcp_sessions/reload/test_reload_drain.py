"""Draining removed servers: no call lost, the deadline cancels clearly, shutdown reaps.

Calls in flight wait at a gate (``general__wait_for_file``) that only the test opens, so whether a call
finished or was cancelled never depends on how fast this machine is.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp_helpers import example_server, in_memory, stdio_server
from reload_helpers import Gate, Recorder, child_processes
from servers import wait_for_file

from toolsift import ServerDraining, ToolNotFound
from toolsift.mcp_sessions._internal import SessionState
from toolsift.mcp_sessions.reload import McpServerManager
from toolsift.registry import ToolRegistry, ToolResult

CALLS = 100


async def test_reload_removal_lets_100_calls_in_flight_finish(tmp_path: Path) -> None:
    registry = ToolRegistry()
    gate = Gate(tmp_path)
    config = stdio_server("general", "general.py", internal_only=False, trust="trusted")
    # In this process: what is counted and refused is the manager's doing, not the child's.
    manager = McpServerManager(
        registry, {"general": config}, drain_seconds=30, options=in_memory({"general": example_server("general.py")})
    )
    events = Recorder(manager)
    async with manager:
        session = manager["general"]
        results: list[ToolResult] = []

        async def held_call() -> None:
            results.append(await registry.execute("general__wait_for_file", gate.arguments))

        async with anyio.create_task_group() as calls:
            for _ in range(CALLS):
                calls.start_soon(held_call)
            await anyio.wait_all_tasks_blocked()
            assert session.in_flight == CALLS
            await manager.apply({})
            # At once: the tools are gone, new calls by name or through the session are refused.
            assert registry.servers() == [] and "general" not in manager
            refusal = r"MCP server 'general' is draining \(removed at .*\); no new calls"
            with pytest.raises(ToolNotFound, match=refusal) as gone:
                await registry.execute("general__echo", {"text": "late"})
            with pytest.raises(ServerDraining, match=r"MCP server 'general' is draining \(removed at ") as refused:
                await session.call_tool("echo", {"text": "late"})
            assert str(refused.value) in str(gone.value)  # one drain, one moment, whoever is told
            [row] = manager.status()
            assert (row.role, row.state, row.in_flight, row.tools) == ("draining", SessionState.DRAINING, CALLS, 0)
            draining = await events.next("server.draining", "general")
            assert draining.reason == "removed from the config; calls in flight may finish within 30s"
            gate.open()
        assert len(results) == CALLS
        assert all(not r.is_error and r.text_content() == "released" for r in results)
        removed = await events.next("server.removed", "general")
        assert removed.reason == "every call in flight had finished" and session.state is SessionState.CLOSED
        assert (removed.calls_finished, removed.calls_cancelled) == (CALLS, 0)
        assert manager.status() == [] and not manager.draining


async def test_reload_drain_deadline_cancels_a_longer_call_with_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "cancelled"
    monkeypatch.setenv("TOOLSIFT_CANCEL_MARKER", str(marker))  # read by general.py, which runs in this process
    registry = ToolRegistry()
    config = stdio_server("general", "general.py", internal_only=False, trust="trusted")
    options = in_memory({"general": example_server("general.py")})
    manager = McpServerManager(registry, {"general": config}, drain_seconds=0.3, options=options)
    events = Recorder(manager)
    async with manager:
        assert manager.drain_seconds == 0.3
        results: list[ToolResult] = []

        async def long_call() -> None:  # its gate is never opened
            results.append(await registry.execute("general__wait_for_file", Gate(tmp_path).arguments))

        async with anyio.create_task_group() as calls:
            calls.start_soon(long_call)
            await anyio.wait_all_tasks_blocked()
            await manager.apply({})
        assert results[0].is_error and results[0].meta["mcp_failure"] == "cancelled"
        assert results[0].text_content() == (
            "Tool 'wait_for_file' of MCP server 'general' was cancelled while it "
            "ran: the session was drained: its server was removed or changed."
        )
        removed = await events.next("server.removed", "general")
        assert removed.reason == "drainSeconds (0.3s) ran out: 1 of 1 calls in flight was cancelled"
        assert (removed.calls_finished, removed.calls_cancelled) == (0, 1)
        assert await wait_for_file(marker) == "CANCELLED wait_for_file\n"  # the server was told


async def test_manager_shutdown_closes_every_session_and_leaves_no_child_process(tmp_path: Path) -> None:
    before = set(child_processes())
    registry = ToolRegistry()
    servers = {
        "general": stdio_server("general", "general.py", internal_only=False),
        "faulty": stdio_server("faulty", "faulty.py"),
    }
    results: list[ToolResult] = []

    async def held_call() -> None:  # its gate is never opened
        results.append(await registry.execute("general__wait_for_file", Gate(tmp_path).arguments))

    manager = McpServerManager(registry, servers, drain_seconds=30)
    async with anyio.create_task_group() as calls, manager:
        sessions = list(manager.values())
        calls.start_soon(held_call)
        await anyio.wait_all_tasks_blocked()
        # One draining session with a call, one replacement still starting, one serving.
        await manager.apply({"faulty": servers["faulty"]})
        slow_start = stdio_server("faulty", "faulty.py", "--init-delay", "30")
        await manager.apply({"faulty": slow_start}, wait=False)
        sessions += manager.draining
        assert {row.role for row in manager.status()} == {"serving", "starting", "draining"}
        assert len(set(child_processes()) - before) >= 2
        # Leaving the manager closes all three; the drained call returns an error, not an exception.
    assert results[0].is_error and "cancelled while it ran: the session was closed" in results[0].text_content()
    assert all(s.state is SessionState.CLOSED for s in sessions)
    left = {pid: state for pid, state in child_processes().items() if pid not in before}
    assert left == {}, f"child processes left behind (state Z is a zombie): {left}"
    assert len(registry) == 0
