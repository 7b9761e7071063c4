"""McpServerManager.apply: add, remove, change, no-op, rename, internalOnly, handovers.

The example servers run in this process (``in_memory``), except where a child process is the point: one that
cannot start, one that is slow to start and must be closed in the background.

Calls that must stay in flight across a reload wait at a gate (``general__wait_for_file``) that the
test opens when it is done looking: nothing here depends on how fast a server starts or a call runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_helpers import example_server, faulty, in_memory, stdio_server, wait_for_state
from reload_helpers import Gate, Recorder

from toolsift import ServerDraining, ToolNotFound
from toolsift.config import ServerConfig
from toolsift.mcp_sessions import SessionOptions
from toolsift.mcp_sessions._internal import SessionState
from toolsift.mcp_sessions._wrapper import McpToolWrapper
from toolsift.mcp_sessions.reload import McpServerManager
from toolsift.registry import ToolRegistry, ToolResult
from toolsift.registry._internal import RegistryChange


def general(name: str = "general", **fields: Any) -> ServerConfig:
    return stdio_server(name, "general.py", **{"internal_only": False, **fields})


def memory() -> SessionOptions:
    """The servers these tests name, in this process: the reload logic needs no child processes."""
    return in_memory(
        {
            **dict.fromkeys(("general", "gone", "renamed", "a"), example_server("general.py")),
            **dict.fromkeys(("added", "b"), faulty()),
        }
    )


def owners(registry: ToolRegistry, namespace: str) -> set[object]:
    return {tool.session for tool in registry.tools(server=namespace) if isinstance(tool, McpToolWrapper)}


async def test_reload_adds_removes_and_leaves_unchanged_servers_alone(tmp_path: Path) -> None:
    registry = ToolRegistry()
    gate = Gate(tmp_path)
    kept, gone = general(), general("gone")
    manager = McpServerManager(registry, {"general": kept, "gone": gone}, options=memory())
    events = Recorder(manager)
    async with manager:
        assert (await events.next("server.added", "general")).state is SessionState.READY
        await events.next("server.added", "gone")
        first = manager["general"]
        added = stdio_server("added", "faulty.py")
        results: list[ToolResult] = []

        async def call_gone() -> None:
            results.append(await registry.execute("gone__wait_for_file", gate.arguments))

        async with anyio.create_task_group() as calls:
            calls.start_soon(call_gone)
            await anyio.wait_all_tasks_blocked()
            diff = await manager.apply({"general": kept, "added": added}, wait=False)
            with pytest.raises(ToolNotFound, match=r"'gone__echo'; MCP server 'gone' is draining \(removed at "):
                await registry.execute("gone__echo", {"text": "x"})
            gate.open("still answered")
        assert "still answered" in results[0].text_content()
        removed = await events.next("server.removed", "gone")
        assert removed.state is SessionState.CLOSED and removed.reason == "every call in flight had finished"
        assert (removed.calls_finished, removed.calls_cancelled) == (1, 0)
        await events.next("server.added", "added")
        assert (diff.added, diff.removed, diff.changed, diff.unchanged) == (("added",), ("gone",), (), ("general",))
        assert str(diff) == "added added; removed gone"
        assert manager["general"] is first and first.state is SessionState.READY and first.restarts == 0
        assert set(manager) == {"general", "added"} and manager["added"].state is SessionState.READY
        assert registry.servers() == ["general", "added"] and registry.is_internal("added__echo")
        with pytest.raises(ToolNotFound, match="no server 'gone' has registered tools"):
            await registry.execute("gone__echo", {"text": "x"})

        same = await manager.apply({"general": kept, "added": added})
        assert not same and str(same) == "no server changed" and same.unchanged == ("added", "general")
        seen = len(events.events)
        await manager.apply({"general": kept})
        await events.next("server.removed", "added")
        # The no-op apply told nobody anything: the next events are the removal's.
        assert events.kinds()[seen:] == [
            ("server.draining", "added"),
            ("tools.changed", "added"),
            ("server.removed", "added"),
        ]
        assert manager["general"] is first
    assert first.state is SessionState.CLOSED and len(registry) == 0
    for server in ("general", "gone"):
        own = [kind for kind, name in events.kinds() if name == server]
        assert own[:2] == ["server.added", "tools.changed"]  # announced, then its tools are in


async def test_reload_changed_server_keeps_serving_from_the_new_session_while_the_old_drains(
    tmp_path: Path,
) -> None:
    registry = ToolRegistry()
    gate = Gate(tmp_path)
    manager = McpServerManager(registry, {"general": general()}, drain_seconds=30, options=memory())
    events = Recorder(manager)
    async with manager:
        old = manager["general"]
        results: list[ToolResult] = []

        async def held_call() -> None:
            results.append(await registry.execute("general__wait_for_file", gate.arguments))

        async with anyio.create_task_group() as calls:
            for _ in range(3):
                calls.start_soon(held_call)
            await anyio.wait_all_tasks_blocked()
            assert old.in_flight == 3
            diff = await manager.apply({"general": general(tool_timeout=5.0)})
            assert diff.changed == ("general",)
            new = manager["general"]
            assert new is not old and new.state is SessionState.READY and new.config.tool_timeout == 5.0
            assert owners(registry, "general") == {new}
            assert old in manager.draining and old.state is SessionState.DRAINING
            rows = [(r.server, r.role, r.state, r.in_flight) for r in manager.status()]
            assert rows == [
                ("general", "serving", SessionState.READY, 0),
                ("general", "draining", SessionState.DRAINING, 3),
            ]
            assert manager.status()[1].line().endswith("; 3 calls in flight")
            assert "[draining] general: draining" in manager.status()[1].line()
            echoed = await registry.execute("general__echo", {"text": "from the new session"})
            assert "from the new session" in echoed.text_content() and new.in_flight == 0
            with pytest.raises(ServerDraining, match=r"'general' is draining \(removed at "):
                await old.call_tool("echo", {"text": "x"})
            gate.open()
        assert len(results) == 3 and all("released" in r.text_content() and not r.is_error for r in results)
        closed = await events.next("server.removed", "general")
        assert closed.session is old and closed.reason == "its old session closed: every call in flight had finished"
        assert (closed.calls_finished, closed.calls_cancelled) == (3, 0)
        assert not manager.draining and new.state is SessionState.READY
        # Same schemas before and after: the handover changed no tools, so no tools.changed.
        assert events.kinds() == [
            ("server.added", "general"),
            ("tools.changed", "general"),
            ("server.restarted", "general"),
            ("server.draining", "general"),
            ("server.removed", "general"),
        ]


async def test_reload_handover_is_one_registry_change() -> None:
    registry = ToolRegistry()
    manager = McpServerManager(registry, {"general": general()}, options=memory())
    async with manager:
        names = {tool.spec.name for tool in registry.tools(server="general")}
        changes: list[RegistryChange] = []
        sizes: list[int] = []

        def on_change(change: RegistryChange) -> None:
            changes.append(change)
            sizes.append(len(registry.tools(server="general")))  # what a subscriber sees right then

        unsubscribe = registry.subscribe(on_change)
        await manager.apply({"general": general(tool_timeout=5.0)})
        unsubscribe()
        assert len(changes) == 1, changes
        [change] = changes
        assert change.server == "general" and set(change.updated) == names
        assert change.added == () and change.removed == ()
        assert sizes == [len(names)]  # never an empty server in between
        assert owners(registry, "general") == {manager["general"]}


async def test_reload_new_session_that_fails_to_start_still_takes_over() -> None:
    registry = ToolRegistry()
    manager = McpServerManager(registry, {"general": general()})
    events = Recorder(manager)
    async with manager:
        assert (await events.next("tools.changed", "general")).tools
        old = manager["general"]
        broken = stdio_server("general", "faulty.py", "--crash-at-start", internal_only=False)
        await manager.apply({"general": broken})
        restarted = await events.next("server.restarted", "general")
        assert restarted.state is SessionState.ERROR and restarted.reason is not None
        assert restarted.reason.startswith("could not start")
        assert manager["general"].state is SessionState.ERROR and registry.servers() == []
        assert (await events.next("tools.changed", "general")).tools == ()
        await events.next("server.removed", "general")
        assert old.state is SessionState.CLOSED


async def test_reload_rename_drains_the_old_name_and_starts_the_new_one(tmp_path: Path) -> None:
    registry = ToolRegistry()
    gate = Gate(tmp_path)
    manager = McpServerManager(registry, {"general": general()}, options=memory())
    events = Recorder(manager)
    async with manager:
        results: list[ToolResult] = []

        async def held_call() -> None:
            results.append(await registry.execute("general__wait_for_file", gate.arguments))

        async with anyio.create_task_group() as calls:
            calls.start_soon(held_call)
            await anyio.wait_all_tasks_blocked()
            diff = await manager.apply({"renamed": general("renamed")})
            assert (diff.added, diff.removed) == (("renamed",), ("general",))
            assert registry.servers() == ["renamed"]
            with pytest.raises(ToolNotFound, match="MCP server 'general' is draining"):
                await registry.execute("general__echo", {"text": "x"})
            gate.open()
        assert "released" in results[0].text_content() and not results[0].is_error
        await events.next("server.removed", "general")
        assert set(manager) == {"renamed"}


async def test_reload_internal_only_flip_restarts_and_moves_the_tools_to_the_other_tier() -> None:
    registry = ToolRegistry()
    manager = McpServerManager(registry, {"general": general()}, options=memory())
    events = Recorder(manager)
    async with manager:
        await events.next("tools.changed", "general")
        assert not registry.is_internal("general__echo")
        await manager.apply({"general": general(internal_only=True)})
        await events.next("server.restarted", "general")
        changed = await events.next("tools.changed", "general")
        assert "general__echo" in changed.tools and registry.is_internal("general__echo")
        assert manager.status()[0].visibility == "internal"


async def test_reload_of_an_empty_server_list_drains_every_server() -> None:
    registry = ToolRegistry()
    manager = McpServerManager(registry, {"a": general("a"), "b": stdio_server("b", "faulty.py")}, options=memory())
    events = Recorder(manager)
    async with manager:
        diff = await manager.apply({})
        assert diff.removed == ("a", "b") and len(manager) == 0 and len(registry) == 0
        assert {e.server for e in [await events.next("server.removed"), await events.next("server.removed")]} == {
            "a",
            "b",
        }
        assert manager.status() == []


async def test_reload_edit_during_a_slow_start_closes_the_unfinished_replacement_in_the_background() -> None:
    registry = ToolRegistry()
    original = general()
    manager = McpServerManager(registry, {"general": original})
    events = Recorder(manager)
    async with manager:
        old = manager["general"]
        slow = stdio_server("general", "faulty.py", "--init-delay", "30", internal_only=False)
        await manager.apply({"general": slow}, wait=False)
        abandoned = manager.starting["general"]
        assert abandoned.state in (SessionState.IDLE, SessionState.CONNECTING)
        # Back to the settings the old session runs: the replacement goes, the old one stays.
        diff = await manager.apply({"general": original})
        assert diff.changed == ("general",)
        # The apply did not wait for the replacement's child to exit: that happens in the background.
        assert abandoned.state is not SessionState.CLOSED
        assert manager["general"] is old and old.state is SessionState.READY
        assert [row.role for row in manager.status()] == ["serving"] and manager.starting == {}
        await wait_for_state(abandoned, SessionState.CLOSED)
        # A newer edit while a replacement starts: the newest settings win.
        await manager.apply({"general": slow}, wait=False)
        await manager.apply({"general": general(tool_timeout=7.0)})
        assert manager["general"].config.tool_timeout == 7.0
        await events.next("server.removed", "general")
        assert old.state is SessionState.CLOSED
    restarted = [e for e in events.events if e.kind == "server.restarted"]
    assert len(restarted) == 1 and restarted[0].session is manager["general"]


async def test_reload_lazy_replacement_and_disabled_server() -> None:
    registry = ToolRegistry()
    manager = McpServerManager(registry, {"general": general()}, options=memory())
    events = Recorder(manager)
    async with manager:
        await manager.apply({"general": general(lazy=True)})
        restarted = await events.next("server.restarted", "general")
        assert restarted.state is SessionState.IDLE and manager["general"].state is SessionState.IDLE
        assert registry.servers() == []  # a lazy server registers nothing until its first use
        await events.next("server.removed", "general")
        await manager["general"].ensure_started()
        assert (await events.next("tools.changed", "general")).tools

        await manager.apply({"general": general(lazy=True, enabled=False)})
        assert manager.skipped == {"general": "disabled (enabled: false)"} and "general" not in manager
        await events.next("server.draining", "general")
        assert registry.servers() == []
        await manager.apply({"general": general()})
        assert (await events.next("server.added", "general")).state is SessionState.READY
        assert manager.skipped == {} and registry.servers() == ["general"]
