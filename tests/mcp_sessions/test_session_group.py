"""McpSessionGroup as the one owner of sessions: its lifecycle, replace and retire, its events."""

from __future__ import annotations

import math

import pytest
from mcp_helpers import example_server, in_memory, stdio_server
from reload_helpers import Recorder

from toolsift.config import ServerConfig
from toolsift.mcp_sessions import McpSessionGroup, register_mcp_tools
from toolsift.mcp_sessions._internal import SessionState
from toolsift.mcp_sessions._resource import ResourceState
from toolsift.registry import ToolRegistry


def general(name: str = "general", **fields: object) -> ServerConfig:
    return stdio_server(name, "general.py", **{"internal_only": False, **fields})


async def test_group_lifecycle_is_single_use_with_clear_errors() -> None:
    group = McpSessionGroup()
    assert group.state is ResourceState.UNOPENED
    with pytest.raises(RuntimeError, match=r"McpSessionGroup is not running; use 'async with McpSessionGroup\(...\)'"):
        group.retire("nobody")
    async with group:
        assert group.state is ResourceState.OPEN
        with pytest.raises(RuntimeError, match="McpSessionGroup is already entered"):
            await group.__aenter__()
        await group.aclose()
        assert group.state is ResourceState.CLOSED
        await group.aclose()  # closing twice is harmless
    with pytest.raises(RuntimeError, match="Cannot reopen an McpSessionGroup once it has been closed"):
        await group.__aenter__()
    with pytest.raises(RuntimeError, match="McpSessionGroup is not running"):
        group.spawn(general())


def test_group_refuses_a_bad_drain_time() -> None:
    for bad in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="drain_seconds must be a finite number of seconds >= 0"):
            McpSessionGroup(drain_seconds=bad)
    group = McpSessionGroup(drain_seconds=2)
    with pytest.raises(ValueError, match="got -3"):
        group.drain_seconds = -3
    assert group.drain_seconds == 2


async def test_register_mcp_tools_yields_the_group_that_replaces_and_retires() -> None:
    registry = ToolRegistry()
    servers = {"general": general(), "off": general("off", enabled=False)}
    async with register_mcp_tools(
        servers, registry, options=in_memory({"general": example_server("general.py")})
    ) as group:
        events = Recorder(group)
        old = group["general"]
        assert group.skipped == {"off": "disabled (enabled: false)"}
        assert group.replace(old.config) is old  # the settings it runs: nothing to do
        new = group.replace(general(tool_timeout=5.0))
        assert new is not None and group.starting == {"general": new} and group["general"] is old
        await new.wait_settled()
        assert group["general"] is new and old in group.draining
        assert {tool.session for tool in registry.tools(server="general")} == {new}  # type: ignore[attr-defined]
        replaced = await events.next("server.removed", "general")
        assert replaced.session is old and old.state is SessionState.CLOSED
        assert group.retire("off") is None and group.skipped == {}
        assert group.retire("general") is new and len(group) == 0 and len(registry) == 0
        with pytest.raises(KeyError):
            group.retire("general")
        assert (await events.next("server.removed", "general")).session is new
    kinds = [(e.kind, e.server) for e in events.events if e.kind in ("server.restarted", "server.draining")]
    assert kinds == [("server.restarted", "general"), ("server.draining", "general"), ("server.draining", "general")]
