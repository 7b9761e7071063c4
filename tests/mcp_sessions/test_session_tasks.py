"""Task-augmented calls against the protocol's reference server: a tool that runs only as a task.

server-everything's ``simulate-research-query`` declares ``execution.taskSupport:
"required"``; a plain ``tools/call`` to it is refused, so the session creates
a task, follows its status as progress, fetches its result, and cancels it
when the caller gives up.
"""

from __future__ import annotations

import mcp.types as types
import pytest
from interop_servers import everything, needs_everything
from mcp_helpers import faulty, in_memory, stdio_server, wait_for

from toolsift.mcp_sessions import ClientCallbacks, McpSession, SessionOptions
from toolsift.mcp_sessions._tasks import runs_as_task
from toolsift.registry import ToolResult

pytestmark = pytest.mark.interop


RESEARCH = "simulate-research-query"


async def research_listed(session: McpSession) -> None:
    """Wait for the listing that has the research tool: server-everything adds it after the handshake and
    announces it with ``tools/list_changed``, so the first listing may come before it."""
    await wait_for(session, lambda s: RESEARCH in s.catalog.task_support)


def text(result: ToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


@pytest.mark.parametrize(
    ("support", "mode", "expected"),
    [
        ("required", "when-required", True),
        ("required", "when-supported", True),
        ("optional", "when-required", False),
        ("optional", "when-supported", True),
        ("forbidden", "when-supported", False),
        (None, "when-supported", False),
    ],
)
def test_which_tools_run_as_tasks(support: str | None, mode: str, expected: bool) -> None:
    assert runs_as_task(support, mode) is expected


@needs_everything
async def test_a_tool_that_requires_a_task_runs_as_one_with_its_status_as_progress() -> None:
    seen: list[tuple[float, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, message))

    async with McpSession(everything()) as session:
        await research_listed(session)
        assert session.catalog.task_support[RESEARCH] == "required"
        result = await session.call_tool(RESEARCH, {"topic": "bees"}, progress=progress)
    assert not result.is_error, text(result)
    assert "# Research Report: bees" in text(result)
    assert [done for done, _ in seen] == list(range(1, len(seen) + 1))
    assert seen and seen[0][1] == "Gathering sources..."


@needs_everything
async def test_a_task_that_asks_for_input_reaches_the_elicitation_callback() -> None:
    asked: list[str] = []

    async def elicit(server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(f"{server}: {params.message}")
        return types.ElicitResult(action="accept", content={"interpretation": "the insects"})

    options = SessionOptions(callbacks=ClientCallbacks(elicitation=elicit))
    async with McpSession(everything("legacy"), options=options) as session:
        await research_listed(session)
        result = await session.call_tool(RESEARCH, {"topic": "python", "ambiguous": True})
    assert not result.is_error, text(result)
    assert len(asked) == 1 and asked[0].startswith("everything: ")
    assert "the insects" in text(result)


@needs_everything
async def test_a_task_the_caller_stops_waiting_for_is_cancelled_on_the_server() -> None:
    async with McpSession(everything()) as session:
        await research_listed(session)
        timed_out = await session.call_tool(RESEARCH, {"topic": "bees"}, timeout=0.3)
        assert timed_out.is_error and "did not answer within 0.3s" in text(timed_out)
        # The cancel was awaited before the call returned, so the server's task list says so now.
        client = await session.client()
        listed = await client.session.send_request(types.ListTasksRequest(), types.ListTasksResult)
    assert [task.status for task in listed.tasks] == ["cancelled"]


async def test_a_server_that_claims_tasks_but_runs_none_gives_its_error() -> None:
    config = stdio_server("faulty", "faulty.py", "--fake-tasks", protocol="legacy")
    async with McpSession(config, options=in_memory({"faulty": faulty(fake_tasks=True)})) as session:
        refused = await session.call_tool("research", {"name": "x"})
    assert refused.is_error and "-32601" in text(refused) and "tasks are not supported here" in text(refused)
