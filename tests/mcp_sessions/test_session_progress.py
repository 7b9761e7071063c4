"""A call's progress notifications reach its caller before the call returns, however long each one takes.

The SDK runs each progress callback in a task of its own, started as the
notification arrives, while the answer resolves the call at once: a callback
that waits on anything (a gateway's goes out to its own client) may still be
running when the result comes back. The session's call waits for them.
"""

from __future__ import annotations

import anyio
import pytest
from mcp_helpers import example_server, in_memory, stdio_server

from toolsift.mcp_sessions import McpSession

STEPS = 50  # enough notifications in flight at once for the race to show on every run


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_every_progress_callback_has_run_when_the_call_returns(mode: str) -> None:
    seen: list[float] = []
    send, receive = anyio.create_memory_object_stream[tuple[float, anyio.Event]]()

    async def deliver() -> None:  # the far side of the callback, as a gateway's client is
        async for done, delivered in receive:
            seen.append(done)
            delivered.set()

    async def progress(done: float, total: float | None, message: str | None) -> None:
        delivered = anyio.Event()
        await send.send((done, delivered))
        await delivered.wait()

    options = in_memory({"general": example_server("general.py")})
    async with anyio.create_task_group() as group:
        group.start_soon(deliver)
        async with McpSession(stdio_server("general", "general.py", protocol=mode), options=options) as session:
            result = await session.call_tool("progress", {"steps": STEPS}, progress=progress)
            delivered_before_the_result = list(seen)
        group.cancel_scope.cancel()
    assert result.text_content() == f"done {STEPS} steps"
    assert delivered_before_the_result == list(range(1, STEPS + 1))


async def test_a_failing_progress_callback_does_not_hold_the_call() -> None:
    calls: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        calls.append(done)
        await anyio.lowlevel.checkpoint()
        raise RuntimeError("the caller's callback broke")

    options = in_memory({"general": example_server("general.py")})
    async with McpSession(stdio_server("general", "general.py"), options=options) as session:
        result = await session.call_tool("progress", {"steps": 3}, progress=progress)
    assert result.text_content() == "done 3 steps"
    assert calls == [1, 2, 3]


async def test_a_callback_that_never_ends_holds_the_result_only_for_the_settle_limit(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from toolsift.mcp_sessions import _progress

    monkeypatch.setattr(_progress, "SETTLE_SECONDS", 0.05)  # the bound is what is tested, not its length
    stuck = anyio.Event()

    async def progress(done: float, total: float | None, message: str | None) -> None:
        await stuck.wait()  # a client that stopped reading

    options = in_memory({"general": example_server("general.py")})
    async with McpSession(stdio_server("general", "general.py"), options=options) as session:
        result = await session.call_tool("progress", {"steps": 2}, progress=progress)
        stuck.set()
    assert result.text_content() == "done 2 steps"
    assert "progress callback was still busy" in caplog.text
