"""The restart budget: it recovers, so that no sequence of calls disables a server for good."""

from __future__ import annotations

import math
import re

import anyio
import mcp.types as types
import pytest
from mcp_helpers import local_server, stdio_server, wait_for_state

from toolsift import ServerUnavailable
from toolsift.mcp_sessions import McpSession, SessionOptions
from toolsift.mcp_sessions._budget import RestartBudget
from toolsift.mcp_sessions._internal import SessionState
from toolsift.mcp_sessions._options import RestartPolicy
from toolsift.registry import ToolRegistry, ToolResult

QUICK = RestartPolicy(initial_delay=0.01, max_delay=0.05)


def text(result: ToolResult, index: int = 0) -> str:
    block = result.content[index]
    assert isinstance(block, types.TextContent)
    return block.text


def test_restart_budget_counts_only_restarts_inside_the_window() -> None:
    budget = RestartBudget(2, RestartPolicy(initial_delay=1, max_delay=30, window=100))
    assert budget.next_delay(0) == 1
    budget.record(0)
    assert budget.next_delay(10) == 2
    budget.record(10)
    assert budget.spent(20) and budget.count(20) == 2
    assert budget.next_delay(20) == 80  # until the restart at 0 leaves the window
    assert budget.count(100) == 1 and not budget.spent(100)  # ...which it has at 100
    assert budget.next_delay(100) == 2


def test_restart_budget_never_waits_less_than_the_backoff() -> None:
    budget = RestartBudget(1, RestartPolicy(initial_delay=8, max_delay=30, window=10))
    budget.record(0)
    assert budget.next_delay(9) == 16


def test_restart_budget_forgives_everything_after_a_healthy_connection() -> None:
    budget = RestartBudget(1, RestartPolicy(window=math.inf))
    budget.record(0)
    assert budget.spent(1000)
    budget.forgive()
    assert budget.count(1000) == 0 and budget.next_delay(1000) == 1


def test_restart_budget_of_zero_never_restarts() -> None:
    assert RestartBudget(0, RestartPolicy()).next_delay(0) is None


async def test_session_crash_loop_pauses_the_server_then_starts_it_again() -> None:
    # A short window, and no healthy period: every crash counts until the window lets it go.
    options = SessionOptions(restart=RestartPolicy(initial_delay=0.01, max_delay=0.05, stable_after=math.inf, window=3))
    registry = ToolRegistry()
    config = local_server("crashy", "raw_server.py", max_restarts=1, internal_only=False, protocol="legacy")
    async with McpSession(config, registry=registry, options=options) as session:
        # A crash fails every call in flight: here `big`, whose answer stopped half-way, and `crash` itself.
        sending = anyio.Event()
        results: list[ToolResult] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            sending.set()

        async def call_big() -> None:
            results.append(await session.call_tool("big", {"size": 100_000}, progress=on_progress))

        async with anyio.create_task_group() as calls:
            calls.start_soon(call_big)
            await sending.wait()
            results.append(await session.call_tool("crash"))
        assert [r.meta["mcp_failure"] for r in results] == ["crash", "crash"]
        assert text(results[0]) == (
            "MCP server 'crashy' crashed during tool 'big': the connection closed before it "
            "answered; it is being restarted; the call was not retried."
        )
        await wait_for_state(session, SessionState.READY)
        assert text(await session.call_tool("ping")) == "pong"

        second = await session.call_tool("crash")
        assert re.search(
            r"it had 1 restart within 3s \(maxRestarts=1\), so it is started again in [\d.]+s; "
            r"the call was not retried\.$",
            text(second),
        )
        await wait_for_state(session, SessionState.ERROR)
        assert session.reason is not None
        assert re.search(r"; 1 restart within 3s \(maxRestarts=1\): starting it again in [\d.]+s$", session.reason)
        assert "crashy" not in registry.servers()
        with pytest.raises(ServerUnavailable, match=r"'crashy' is down: .*1 restart within 3s"):
            await session.call_tool("ping")

        await wait_for_state(session, SessionState.READY)
        assert registry.servers() == ["crashy"] and session.restarts == 2
        assert "\npong\n" in (await registry.execute("crashy__ping", {})).text_content()


async def test_session_unencodable_arguments_fail_only_their_call() -> None:
    config = stdio_server("faulty", "faulty.py", protocol="legacy")
    async with McpSession(config, options=SessionOptions(restart=QUICK)) as session:
        result = await session.call_tool("echo", {"text": "half a pair: \ud800"})
        assert result.is_error and result.meta["mcp_failure"] == "not_sent"
        assert re.fullmatch(
            r"Tool 'echo' of MCP server 'faulty' was not called: the request cannot be encoded as "
            r"JSON text \(.*surrogates not allowed\)\.",
            text(result),
        )
        assert session.state is SessionState.READY and session.restarts == 0
        assert text(await session.call_tool("echo", {"text": "still here"})) == "still here"
