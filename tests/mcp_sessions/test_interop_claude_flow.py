"""The test of it all: the real claude-flow server (353 tools when recorded), internal, surfaced by a skill.

Install it to run this test (``.ci/run`` does)::

    npm install --prefix .interop @claude-flow/cli
"""

from __future__ import annotations

from pathlib import Path

import pytest
from interop_servers import CLAUDE_FLOW, needs_claude_flow

from toolsift import PermissionDenied
from toolsift.config import ServerConfig, StdioServer
from toolsift.mcp_sessions import register_mcp_tools
from toolsift.mcp_sessions._internal import SessionState
from toolsift.registry import ToolRegistry, TurnScope
from toolsift.search import SearchIndex

pytestmark = [pytest.mark.interop, needs_claude_flow]


@pytest.fixture
def claude_flow(tmp_path: Path) -> ServerConfig:
    # It keeps its memory and policy files in its working folder and home: both in tmp_path.
    return StdioServer(
        command=str(CLAUDE_FLOW), args=("mcp", "start"), cwd=str(tmp_path), env={"HOME": str(tmp_path)}, timeout=120
    ).with_name("claude-flow")


async def test_claude_flow_stays_internal_until_a_skill_names_it(claude_flow: ServerConfig) -> None:
    registry = ToolRegistry()
    async with register_mcp_tools([claude_flow], registry) as sessions:
        assert sessions["claude-flow"].state is SessionState.READY
        catalogued = registry.tools(server="claude-flow")
        assert len(catalogued) >= 200 and all(registry.is_internal(t.spec.name) for t in catalogued)
        assert not any(s["name"].startswith("claude-flow__") for s in registry.schemas_for_tools(TurnScope()))

        scope = TurnScope(skill_allowed=("claude-flow__memory_*", "*"), skill="flow-memory")
        listed = [s["function"]["name"] for s in registry.schemas_for_tools(scope, "openai", strict=True)]
        memory = sorted(t.spec.name for t in catalogued if t.spec.name.startswith("claude-flow__memory_"))
        assert sorted(n for n in listed if n.startswith("claude-flow__")) == memory
        assert "claude-flow__memory_store" in memory and "claude-flow__swarm_init" not in listed

        stored = await registry.execute("claude-flow__memory_store", {"key": "release", "value": "2026-12-01"}, scope)
        found = await registry.execute("claude-flow__memory_retrieve", {"key": "release"}, scope)
        assert not stored.is_error and not found.is_error
        assert '"value": "2026-12-01"' in found.text_content()
        with pytest.raises(PermissionDenied) as refused:
            await registry.execute("claude-flow__swarm_init", {}, scope)
        assert refused.value.layer == 1


async def test_search_finds_claude_flow_tools_by_what_they_do(claude_flow: ServerConfig) -> None:
    registry = ToolRegistry()
    async with register_mcp_tools([claude_flow], registry):
        index = SearchIndex(registry)
        for query, tool in (
            ("store a value in memory", "claude-flow__memory_store"),
            ("start a new swarm of agents", "claude-flow__swarm_init"),
        ):
            names = [hit.document.name for hit in index.search(query, limit=3)]
            assert tool in names, (query, names)
