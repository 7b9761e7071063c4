"""A burst of tools/list_changed becomes one listing, and an unchanged list leaves the registry alone."""

from __future__ import annotations

import re

import mcp.types as types
import pytest
from mcp_helpers import faulty, in_memory, stdio_server, wait_for

from toolsift.mcp_sessions import McpSession
from toolsift.mcp_sessions._session import SessionEvent
from toolsift.registry import ToolRegistry, ToolResult
from toolsift.registry._internal import RegistryChange

BURST = 1000
# The connect's own listing, the burst's, and the one that sees the real change, with room for a loaded
# machine that stalls the server mid-burst; without coalescing a burst costs dozens.
MAX_LISTINGS = 10


def text(result: ToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_session_burst_of_list_changed_is_one_listing_and_no_registry_swap(mode: str) -> None:
    registry = ToolRegistry()
    changes: list[RegistryChange] = []
    config = stdio_server("faulty", "faulty.py", protocol=mode, internal_only=False, trust="trusted")
    async with McpSession(config, registry=registry, options=in_memory({"faulty": faulty()})) as session:
        tool_events: list[SessionEvent] = []
        session.subscribe(lambda event: tool_events.append(event) if event.kind == "tools" else None)
        registry.subscribe(changes.append)
        assert text(await session.call_tool("announce", {"count": BURST})).startswith(f"announced {BURST} times")
        # A real change after the burst: the listing that shows it ends the burst's listings.
        await session.call_tool("add_tool", {"name": "zebra"})
        await wait_for(session, lambda s: "faulty__zebra" in registry)
        report = text(await session.call_tool("announce", {"count": 0}))
        found = re.search(r"tools/list answered (\d+) times", report)
        assert found is not None and int(found.group(1)) <= MAX_LISTINGS
        assert [change.added for change in changes] == [("faulty__zebra",)]
        assert len(tool_events) == 1 and "faulty__zebra" in tool_events[0].tools
