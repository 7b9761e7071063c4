"""A burst of tools/list_changed becomes one listing, and an unchanged list leaves the registry alone."""

from __future__ import annotations

import re
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp_helpers import faulty, in_memory, stdio_server, wait_for

from toolsift.mcp_sessions import McpSession
from toolsift.mcp_sessions._connection_events import ConnectionEvents
from toolsift.mcp_sessions._session import SessionEvent
from toolsift.registry import ToolRegistry, ToolResult
from toolsift.registry._internal import RegistryChange

BURST = 1000
# The connect's own listing, the one held while the burst arrives, the one after it that takes the whole
# burst, and the one that sees the real change (which the one before may already have seen).
MAX_LISTINGS = 4


class ListingGate:
    """Server middleware that holds ``tools/list`` while closed: a burst then arrives during one listing."""

    def __init__(self) -> None:
        self.closed = False
        self.holding = anyio.Event()
        self.opened = anyio.Event()

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if self.closed and ctx.method == "tools/list":
            self.holding.set()
            await self.opened.wait()
        return await call_next(ctx)

    def open(self) -> None:
        self.closed = False
        self.opened.set()


def text(result: ToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_session_burst_of_list_changed_is_one_listing_and_no_registry_swap(mode: str) -> None:
    registry = ToolRegistry()
    changes: list[RegistryChange] = []
    server = faulty()
    gate = ListingGate()
    server.middleware.insert(0, gate)
    config = stdio_server("faulty", "faulty.py", protocol=mode, internal_only=False, trust="trusted")
    async with McpSession(config, registry=registry, options=in_memory({"faulty": server})) as session:
        tool_events: list[SessionEvent] = []
        session.subscribe(lambda event: tool_events.append(event) if event.kind == "tools" else None)
        registry.subscribe(changes.append)
        # One announcement starts a listing, held open while the whole burst arrives: however slowly the
        # machine runs, the burst can then cost only the one listing that follows it.
        gate.closed = True
        await session.call_tool("announce", {"count": 1})
        await gate.holding.wait()
        assert text(await session.call_tool("announce", {"count": BURST})).startswith(f"announced {BURST} times")
        gate.open()
        # A real change after the burst: the listing that shows it ends the burst's listings.
        await session.call_tool("add_tool", {"name": "zebra"})
        await wait_for(session, lambda s: "faulty__zebra" in registry)
        report = text(await session.call_tool("announce", {"count": 0}))
        found = re.search(r"tools/list answered (\d+) times", report)
        assert found is not None and int(found.group(1)) <= MAX_LISTINGS
        assert [change.added for change in changes] == [("faulty__zebra",)]
        assert len(tool_events) == 1 and "faulty__zebra" in tool_events[0].tools


async def test_relist_requests_made_together_are_taken_as_one() -> None:
    events = ConnectionEvents("faulty")
    for _ in range(BURST):
        events.request_relist("tools")
    events.request_relist("prompts")
    assert await events.next_relist() == {"tools", "prompts"}
    assert events.relist == set()
