"""The rules a reload follows: bad entries, drainSeconds and its precedence, truthful drain reports, read order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_helpers import example_server, faulty, in_memory, stdio_server
from reload_helpers import Gate, Recorder, example, write_config

import toolsift.mcp_sessions.reload._manager as manager_module
from toolsift import ConfigError
from toolsift.config import load_config, parse_config
from toolsift.config._internal import ConfigReport
from toolsift.mcp_sessions import SessionOptions
from toolsift.mcp_sessions._internal import SessionState
from toolsift.mcp_sessions.reload import McpServerManager
from toolsift.registry import ToolRegistry, ToolResult


def memory() -> SessionOptions:
    """The servers these tests name, in this process: the rules of a reload need no child processes."""
    return in_memory({"general": example_server("general.py"), **dict.fromkeys(("a", "b", "own", "file"), faulty())})


async def test_reload_applies_the_rest_when_an_entry_left_out_at_start_is_still_bad(tmp_path: Path) -> None:
    bad = example("faulty.py", timeout=-1)
    path = write_config(tmp_path / "toolsift.json", {"bad": bad, "a": example("faulty.py")})
    config = load_config(path, lenient=True)  # the start leaves "bad" out and runs the rest
    async with McpServerManager(ToolRegistry(), config, options=memory()) as manager:
        events = Recorder(manager)
        assert set(manager) == {"a"}
        write_config(path, {"bad": bad, "a": example("faulty.py"), "b": example("faulty.py")})
        diff = await manager.reload()
        assert diff is not None and diff.added == ("b",) and diff.unchanged == ("a",)
        assert set(manager) == {"a", "b"} and "bad" not in manager.servers
        rejected = await events.next("server.rejected", "bad")
        assert rejected.error is not None and "tools.mcpServers.bad.timeout" in str(rejected.error)
        assert rejected.reason is not None and rejected.reason.endswith("; it is not started")
        assert not [e for e in events.events if e.kind == "config.rejected"]


async def test_reload_keeps_a_running_server_whose_entry_turns_bad_and_applies_the_rest(tmp_path: Path) -> None:
    path = write_config(tmp_path / "toolsift.json", {"a": example("faulty.py")})
    async with McpServerManager(ToolRegistry(), load_config(path), options=memory()) as manager:
        events = Recorder(manager)
        session, settings = manager["a"], manager.servers["a"]
        write_config(path, {"a": example("faulty.py", unknownKey=1), "b": example("faulty.py")})
        diff = await manager.reload()
        assert diff is not None and diff.added == ("b",) and diff.unchanged == ("a",)
        rejected = await events.next("server.rejected", "a")
        assert rejected.reason is not None and "unknownKey" in rejected.reason
        assert rejected.reason.endswith("; it keeps its previous settings")
        assert manager["a"] is session and session.state is SessionState.READY
        assert manager.servers["a"] is settings


def test_config_accepts_drain_seconds_at_the_top_level_and_per_server() -> None:
    config = parse_config({"drainSeconds": 5, "tools": {"mcpServers": {"a": {"command": "x", "drainSeconds": 0}}}})
    assert config.drain_seconds == 5 and config.servers["a"].drain_seconds == 0
    assert parse_config({}).drain_seconds is None
    with pytest.raises(ConfigError, match=r"drainSeconds: expected greater than or equal to 0, found -1"):
        parse_config({"drainSeconds": -1})
    with pytest.raises(ConfigError, match=r"tools\.mcpServers\.a\.drainSeconds: expected a number"):
        parse_config({"tools": {"mcpServers": {"a": {"command": "x", "drainSeconds": "3"}}}})


async def test_drain_seconds_of_the_server_beat_the_file_which_beats_the_argument() -> None:
    config = parse_config(
        {
            "drainSeconds": 5,
            "tools": {
                "mcpServers": {
                    "own": {**example("faulty.py"), "drainSeconds": 0},
                    "file": example("faulty.py"),
                }
            },
        }
    )
    async with McpServerManager(ToolRegistry(), config, drain_seconds=30, options=memory()) as manager:
        events = Recorder(manager)
        assert manager.drain_seconds == 5
        await manager.apply({})
        reasons = {
            e.server: e.reason for e in [await events.next("server.draining"), await events.next("server.draining")]
        }
        assert reasons == {
            "own": "removed from the config; calls in flight may finish within 0s",
            "file": "removed from the config; calls in flight may finish within 5s",
        }
        await manager.apply(config.model_copy(update={"drain_seconds": None}))
        assert manager.drain_seconds == 30  # the file no longer says: the argument's default again


async def test_drain_of_zero_reports_the_calls_it_cancelled(tmp_path: Path) -> None:
    registry = ToolRegistry()
    config = stdio_server("general", "general.py", internal_only=False, trust="trusted")
    manager = McpServerManager(registry, {"general": config}, drain_seconds=0, options=memory())
    events = Recorder(manager)
    async with manager:
        results: list[ToolResult] = []

        async def held_call() -> None:  # its gate is never opened
            results.append(await registry.execute("general__wait_for_file", Gate(tmp_path).arguments))

        async with anyio.create_task_group() as calls:
            calls.start_soon(held_call)
            await anyio.wait_all_tasks_blocked()
            await manager.apply({})
        removed = await events.next("server.removed", "general")
        assert (removed.calls_finished, removed.calls_cancelled) == (0, 1)
        assert removed.reason == "drainSeconds (0s) ran out: 1 of 1 calls in flight was cancelled"
        assert results[0].is_error and results[0].meta["mcp_failure"] == "cancelled"


async def test_reloads_apply_in_the_order_they_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = write_config(tmp_path / "toolsift.json", {})
    older, newer = ({"tools": {"mcpServers": {name: {"command": "x", "enabled": False}}}} for name in ("one", "two"))
    reads: list[dict[str, Any]] = [older, newer]
    first_read_may_end = anyio.Event()

    async def read_config(file: Path) -> ConfigReport:
        # The first read (the watcher's start-up check, say) is slow; a manual reload reads the newer file.
        data = reads.pop(0)
        if data is older:
            await first_read_may_end.wait()
        return ConfigReport(parse_config(data, file))

    monkeypatch.setattr(manager_module, "read_config", read_config)
    async with McpServerManager(ToolRegistry(), load_config(path)) as manager, anyio.create_task_group() as tasks:
        tasks.start_soon(manager.reload)
        await anyio.wait_all_tasks_blocked()
        tasks.start_soon(manager.reload)
        await anyio.wait_all_tasks_blocked()
        first_read_may_end.set()
    assert list(manager.servers) == ["two"]  # the newer read won, though the older one finished last
