"""register_mcp_tools: parallel start, global vs internal tools, isolation, status, lazy servers, list changes."""

from __future__ import annotations

import json
import logging
import sys
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path

import anyio
import pytest
from mcp.client import Transport
from mcp.server.mcpserver import MCPServer
from mcp_helpers import (
    FAST,
    TESTS,
    example_server,
    faulty,
    in_memory,
    in_memory_everywhere,
    local_server_object,
    stdio_server,
    wait_for,
)
from servers import EXAMPLES, example_module, http_server

from toolsift import ConfigError, ServerUnavailable
from toolsift.config import HttpServer, load_config
from toolsift.mcp_sessions import McpSession, McpSessionGroup, register_mcp_tools
from toolsift.mcp_sessions._internal import SessionState
from toolsift.mcp_sessions._session import SessionEvent
from toolsift.mcp_sessions._status import format_status, status_rows
from toolsift.mcp_sessions._transport import MemoryTransport, TransportContext
from toolsift.registry import ToolRegistry, TurnScope


def write_config(folder: Path, servers: dict[str, dict[str, object]], **extra: object) -> Path:
    path = folder / "toolsift.json"
    path.write_text(json.dumps({"tools": {"mcpServers": servers}, **extra}), encoding="utf-8")
    return path


def example(script: str, *args: str, **fields: object) -> dict[str, object]:
    return {"command": sys.executable, "args": [str(EXAMPLES / script), *args], **fields}


async def test_bootstrap_registers_global_and_internal_tools_and_isolates_failures(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="toolsift.mcp_sessions")
    config = load_config(
        write_config(
            tmp_path,
            {
                "general": example("general.py", internalOnly=False),
                "flow": example("flow.py"),
                "broken": example("faulty.py", "--crash-at-start", internalOnly=False),
                "off": example("general.py", enabled=False),
                "nothing": {},
            },
        ),
        lenient=True,  # "nothing" has neither command nor url: a problem, left out while the rest loads
    )
    registry = ToolRegistry()
    # The server that cannot start is a child process; the healthy ones run in this process.
    options = in_memory({"general": example_server("general.py"), "flow": example_module("flow.py").build_server()})
    async with register_mcp_tools(config, registry, options=options) as sessions:
        assert set(sessions) == {"general", "flow", "broken"}
        # The loader already left "nothing" out (with its own error); "off" is kept but not started.
        assert sessions.skipped == {"off": "disabled (enabled: false)"}
        assert sessions["general"].state is SessionState.READY and sessions["flow"].state is SessionState.READY
        assert sessions["broken"].state is SessionState.ERROR
        assert not registry.is_internal("general__echo")
        assert registry.is_internal("flow__memory_store")
        visible = {tool.spec.name for tool in registry.visible_tools(TurnScope())}
        assert "general__echo" in visible and not any(name.startswith("flow__") for name in visible)
        rows = {row.server: row for row in status_rows(sessions)}
        assert rows["general"].visibility == "global" and rows["flow"].visibility == "internal"
        assert rows["flow"].tools > 200 and rows["broken"].tools == 0
        assert rows["broken"].error is not None and rows["broken"].error.startswith("could not start")
        table = format_status(sessions.status())
        assert table.splitlines()[0].split() == ["server", "transport", "visibility", "state", "tools", "error"]
        assert table.splitlines()[1].startswith("broken   stdio      global      error  0      could not start")
        result = await registry.execute("general__add", {"a": 1, "b": 2})
        assert result.structured_content == {"result": 3}
    assert all(s.state is SessionState.CLOSED for s in sessions.values())
    assert len(registry) == 0
    summary = [r.getMessage() for r in caplog.records if r.getMessage().startswith("MCP ")]
    assert any(line.startswith("MCP general: ready (stdio, global, 13 tools") for line in summary)
    assert any(line.startswith("MCP broken: error (stdio, global, 0 tools") for line in summary)
    assert "MCP off: skipped (disabled (enabled: false))" in summary


class Turnstile:
    """A transport whose connections each wait until ``expected`` of them have begun: a barrier.

    Started one after the other, the first connection would wait for the
    others forever (until the hang guard); started together, all pass.
    """

    def __init__(self, server: MCPServer, expected: int) -> None:
        self._inner = MemoryTransport(server)
        self._expected = expected
        self.entered: list[str] = []
        self._all_in = anyio.Event()

    async def open(self, stack: AsyncExitStack, context: TransportContext) -> Transport:
        self.entered.append(context.server)
        if len(self.entered) == self._expected:
            self._all_in.set()
        await self._all_in.wait()
        return await self._inner.open(stack, context)


async def test_bootstrap_starts_servers_in_parallel() -> None:
    names = [f"slow{i}" for i in range(4)]
    turnstile = Turnstile(example_server("general.py"), expected=len(names))
    options = replace(FAST, transports=dict.fromkeys(names, turnstile))
    servers = [stdio_server(name, "general.py") for name in names]
    async with register_mcp_tools(servers, ToolRegistry(), options=options) as sessions:
        assert all(session.state is SessionState.READY for session in sessions.values())
    assert sorted(turnstile.entered) == names


async def test_bootstrap_accepts_a_list_of_servers_and_offers_the_configured_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the options are built from is the point, not the servers' processes: both run in this process.
    in_memory_everywhere(monkeypatch, {"local": local_server_object("session_server.py")})
    config = load_config(
        write_config(
            tmp_path,
            {
                "local": {"command": sys.executable, "args": [str(TESTS / "session_server.py")], "internalOnly": False},
            },
            workspace="ws",
        )
    )
    (tmp_path / "ws").mkdir()
    registry = ToolRegistry()
    async with register_mcp_tools(config, registry):
        result = await registry.execute("local__roots", {})
    assert (tmp_path / "ws").as_uri() in result.text_content()
    general = in_memory({"general": example_server("general.py")})
    async with register_mcp_tools([stdio_server("general", "general.py")], registry, options=general) as sessions:
        assert list(sessions) == ["general"] and registry.is_internal("general__echo")


async def test_bootstrap_leaves_lazy_servers_unconnected_until_first_use() -> None:
    registry = ToolRegistry()
    lazy = stdio_server("lazy", "general.py", lazy=True, internal_only=False)
    async with register_mcp_tools(
        {"lazy": lazy}, registry, options=in_memory({"lazy": example_server("general.py")})
    ) as sessions:
        session = sessions["lazy"]
        assert session.state is SessionState.IDLE and registry.servers() == []
        assert session.status().tools == 0
        result = await session.call_tool("echo", {"text": "woke up"})
        assert result.text_content() == "woke up"
        assert session.state is SessionState.READY and registry.servers() == ["lazy"]
        await session.ensure_started()


async def test_bootstrap_lazy_server_that_cannot_start_says_why() -> None:
    broken = stdio_server("lazy", "faulty.py", "--crash-at-start", lazy=True)
    async with register_mcp_tools([broken], ToolRegistry()) as sessions:
        with pytest.raises(ServerUnavailable, match="'lazy' is down: could not start"):
            await sessions["lazy"].ensure_started()


async def test_bootstrap_config_error_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = write_config(tmp_path, {"git": example("general.py", toolTimeout=-1)})
    with pytest.raises(ConfigError, match=r"toolsift\.json.*tools\.mcpServers\.git\.toolTimeout"):
        load_config(path)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_bootstrap_follows_list_changed_with_an_atomic_swap(mode: str) -> None:
    registry = ToolRegistry()
    generations: list[int] = []
    registry.subscribe(lambda change: generations.append(change.generation))
    config = stdio_server("dyn", "faulty.py", protocol=mode, internal_only=False)
    async with register_mcp_tools([config], registry, options=in_memory({"dyn": faulty()})) as sessions:
        session = sessions["dyn"]
        events: list[SessionEvent] = []
        session.subscribe(events.append)
        before = len(generations)
        await registry.execute("dyn__add_tool", {"name": "greet"})
        await wait_for(session, lambda s: "dyn__greet" in registry)
        assert registry.get("dyn__greet").spec.remote_name == "greet"
        assert len(generations) == before + 1  # one replace_server, not a remove plus adds
        await registry.execute("dyn__remove_tool", {"name": "greet"})
        await wait_for(session, lambda s: "dyn__greet" not in registry)
        assert [e.tools for e in events if e.kind == "tools"][-1] == (
            "dyn__echo",
            "dyn__fail",
            "dyn__add_tool",
            "dyn__remove_tool",
            "dyn__announce",
            "dyn__big",
        )


async def test_bootstrap_follows_list_changed_over_http() -> None:
    registry = ToolRegistry()
    async with http_server("faulty.py") as url:
        config = HttpServer(url=url, internal_only=False).with_name("dyn")
        async with register_mcp_tools([config], registry) as sessions:
            await registry.execute("dyn__add_tool", {"name": "greet"})
            await wait_for(sessions["dyn"], lambda s: "dyn__greet" in registry)
            result = await registry.execute("dyn__greet", {"who": "you"})
    assert 'greet called with {"who": "you"}' in result.text_content()


async def test_bootstrap_skips_tools_with_bad_names_and_keeps_the_rest(caplog: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()
    async with register_mcp_tools(
        [stdio_server("dyn", "faulty.py", internal_only=False)], registry, options=in_memory({"dyn": faulty()})
    ) as sessions:
        await registry.execute("dyn__add_tool", {"name": "bad name!"})
        await registry.execute("dyn__add_tool", {"name": "good"})
        await wait_for(sessions["dyn"], lambda s: "dyn__good" in registry)
    assert "MCP server 'dyn': skipping tool 'bad name!'" in caplog.text


async def test_bootstrap_reports_a_namespace_collision_without_stopping(caplog: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()
    first = stdio_server("one", "faulty.py", tool_prefix="shared", internal_only=False)
    second = stdio_server("two", "faulty.py", tool_prefix="shared", internal_only=False)
    async with McpSessionGroup(registry, options=in_memory({"one": faulty(), "two": faulty()})) as group:
        await group.add(first)
        two = await group.add(second)
        assert isinstance(two, McpSession) and two.state is SessionState.READY
        [row] = [row for row in group.status() if row.server == "two"]
        assert row.error == (
            "its tools could not be registered: the namespace 'shared' is already "
            "used by MCP server 'one' (give one of them a different toolPrefix)"
        )
        assert {tool.spec.server for tool in registry.tools(server="shared")} == {"one"}
        with pytest.raises(ValueError, match="'one' already has a session"):
            group.spawn(first)
    with pytest.raises(RuntimeError, match="McpSessionGroup is not running"):
        group.spawn(first)
