"""The reload pieces without servers: diffs, events, the event bus, manager misuse, the registry hint."""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

import anyio
import pytest
from mcp_helpers import stdio_server
from reload_helpers import Recorder, child_processes

from toolsift import ConfigError, ToolNotFound
from toolsift.config import HttpServer, StdioServer
from toolsift.mcp_sessions._draining import Drain
from toolsift.mcp_sessions._events import EventBus
from toolsift.mcp_sessions._internal import ManagerEvent, SessionState
from toolsift.mcp_sessions._status import ServerStatus
from toolsift.mcp_sessions._tracker import CallCounts
from toolsift.mcp_sessions.reload import McpServerManager
from toolsift.mcp_sessions.reload._diff import ConfigDiff, diff_servers
from toolsift.mcp_sessions.reload._watch import watch_file
from toolsift.registry import ToolRegistry


def server(name: str, **fields: object) -> StdioServer:
    return StdioServer.model_validate({"command": "x", **fields}).with_name(name)


def test_diff_servers_sorts_names_by_what_happened_to_them() -> None:
    old = {"a": server("a"), "b": server("b"), "c": server("c")}
    new = {"b": server("b"), "c": server("c", toolTimeout=5), "d": server("d")}
    diff = diff_servers(old, new)
    assert diff == ConfigDiff(added=("d",), removed=("a",), changed=("c",), unchanged=("b",))
    assert diff and str(diff) == "added d; removed a; changed c"
    assert not diff_servers(old, dict(old)) and str(ConfigDiff()) == "no server changed"


def test_diff_servers_counts_a_change_of_transport_as_a_change() -> None:
    stdio = server("a", timeout=5)
    http = HttpServer(url="https://h/mcp", timeout=5).with_name("a")
    assert diff_servers({"a": stdio}, {"a": http}) == ConfigDiff(changed=("a",))
    assert diff_servers({"a": http}, {"a": http.model_copy()}) == ConfigDiff(unchanged=("a",))


def test_manager_event_reads_as_one_line() -> None:
    assert str(ManagerEvent("server.added", "git", state=SessionState.READY)) == "server.added git: ready"
    assert str(ManagerEvent("server.removed", "git")) == "server.removed git"
    assert str(ManagerEvent("tools.changed", "git", tools=("git__a", "git__b"))) == "tools.changed git: 2 tools"
    error = ConfigError("invalid JSON", path="toolsift.json", line=3)
    assert (
        str(ManagerEvent("config.rejected", reason=str(error), error=error))
        == "config.rejected: toolsift.json:3: invalid JSON"
    )


def test_drain_says_why_for_how_long_and_how_its_calls_ended() -> None:
    removed = Drain("git", 2.5, removed=True)
    assert removed.announcement == "removed from the config; calls in flight may finish within 2.5s"
    assert removed.outcome(CallCounts(3, 0)) == "every call in flight had finished"
    assert removed.outcome(CallCounts(1, 1)) == "drainSeconds (2.5s) ran out: 1 of 2 calls in flight was cancelled"
    assert str(removed.error()) == (
        f"MCP server 'git' is draining (removed at {removed.since}); no new calls are accepted"
    )
    replaced = Drain("git", 0, removed=False)
    assert replaced.announcement == "replaced by a session with the new settings; calls in flight may finish within 0s"
    assert replaced.outcome(CallCounts(0, 2)) == (
        "its old session closed: drainSeconds (0s) ran out: 2 of 2 calls in flight were cancelled"
    )
    for bad in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="drain_seconds must be a finite number of seconds >= 0"):
            Drain("git", bad, removed=True)


def test_server_status_line_names_role_and_calls_in_flight() -> None:
    row = ServerStatus(server="git", transport="stdio", visibility="global", state=SessionState.READY, tools=3)
    assert row.line() == "git: ready (stdio, global, 3 tools)"
    draining = ServerStatus(
        server="git",
        transport="stdio",
        visibility="global",
        state=SessionState.DRAINING,
        tools=0,
        in_flight=2,
        role="draining",
    )
    assert draining.line() == "[draining] git: draining (stdio, global, 0 tools); 2 calls in flight"


async def test_event_bus_delivers_in_order_and_survives_a_failing_subscriber(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bus = EventBus()
    seen: list[str] = []

    def broken(event: ManagerEvent) -> None:
        raise RuntimeError("subscriber bug")

    bus.subscribe(broken)
    bus.subscribe(lambda event: seen.append(str(event)))
    unsubscribe = bus.subscribe(lambda event: seen.append("never"))
    unsubscribe()
    unsubscribe()  # twice is harmless
    bus.emit(ManagerEvent("server.added", "early"))  # dropped: the bus is not running yet
    async with anyio.create_task_group() as group:
        await group.start(bus.run)
        bus.emit(ManagerEvent("server.added", "a"))
        bus.emit(lambda: None)  # a deferred event that turned out to be nothing
        bus.emit(lambda: ManagerEvent("server.removed", "a"))
        bus.close()
        bus.emit(ManagerEvent("server.added", "late"))  # dropped: nobody is left to deliver it
        await bus.wait_finished()
    assert seen == ["server.added a", "server.removed a"]
    assert "A subscriber of the MCP session group failed" in caplog.text


async def test_manager_misuse_raises_clear_errors(tmp_path: Path) -> None:
    registry = ToolRegistry()
    for bad in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="drain_seconds must be a finite number of seconds >= 0"):
            McpServerManager(registry, drain_seconds=bad)
    manager = McpServerManager(registry, [server("off", enabled=False)])
    with pytest.raises(RuntimeError, match="McpServerManager is not running"):
        await manager.apply({})
    with pytest.raises(RuntimeError, match="McpServerManager is not running"):
        await manager.reload(tmp_path / "toolsift.json")
    async with manager:
        assert repr(manager) == "McpServerManager()" and manager.skipped == {"off": "disabled (enabled: false)"}
        assert manager.config is None and list(manager.servers) == ["off"]
        with pytest.raises(RuntimeError, match="McpServerManager is already entered"):
            await manager.__aenter__()
        with pytest.raises(ValueError, match="No config file to reload: pass a path"):
            await manager.reload()
        with pytest.raises(ValueError, match="No config file to watch: pass a path"):
            await manager.watch()
        with pytest.raises(ValueError, match="debounce_ms must be >= 0, got -1"):
            await manager.watch(tmp_path / "toolsift.json", debounce_ms=-1)
        with pytest.raises(ConfigError, match="cannot watch the config file: its folder does not exist"):
            await manager.watch(tmp_path / "missing" / "toolsift.json")
        events = Recorder(manager)
        assert await manager.reload(tmp_path / "missing.json") is None
        rejected = await events.next("config.rejected")
        assert "cannot read the config file" in str(rejected.error)
    with pytest.raises(RuntimeError, match="Cannot reopen an McpServerManager once it has been closed"):
        await manager.__aenter__()


async def test_manager_cancelled_while_starting_closes_what_it_started() -> None:
    before = set(child_processes())
    registry = ToolRegistry()
    hanging = stdio_server("hangs", "faulty.py", "--hang", protocol="legacy")
    manager = McpServerManager(registry, {"hangs": hanging})
    with anyio.move_on_after(0.5) as scope:
        async with manager:
            pytest.fail("the start should not finish")  # pragma: no cover
    assert scope.cancelled_caught
    assert manager["hangs"].state is SessionState.CLOSED
    assert {pid for pid in child_processes() if pid not in before} == set()


def test_registry_explains_why_a_namespace_is_empty() -> None:
    registry = ToolRegistry()
    registry.explain_absence("git", "MCP server 'git' is draining (removed at 12:00)")
    with pytest.raises(ToolNotFound, match=r"'git__log'; MCP server 'git' is draining \(removed at 12:00\)"):
        registry.get("git__log")
    registry.explain_absence("git", None)
    registry.explain_absence("git", None)  # forgetting twice is harmless
    with pytest.raises(ToolNotFound, match="no server 'git' has registered tools"):
        registry.get("git__log")


async def test_watch_file_logs_a_failing_reload_and_keeps_watching(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "toolsift.json"
    path.write_text("{}")
    calls: list[str] = []
    again = anyio.Event()

    async def on_change() -> None:
        calls.append(path.read_text())
        if len(calls) == 2:
            again.set()
        raise RuntimeError("reload bug")

    async with anyio.create_task_group() as group:
        await group.start(partial(watch_file, path, on_change, debounce_ms=20))
        assert calls == ["{}"]  # the check made once the watch is in place; it failed, the watch goes on
        path.write_text('{"a": 1}')
        await again.wait()
        group.cancel_scope.cancel()
    assert calls[:2] == ["{}", '{"a": 1}']
    assert "Reloading the config file" in caplog.text and "reload bug" in caplog.text
