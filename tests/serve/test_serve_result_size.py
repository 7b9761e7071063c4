"""One size rule for a big result, served or in the agent loop: cut to the limit, with a note."""

from __future__ import annotations

from pathlib import Path

import mcp.types as types
import pytest
from mcp import Client
from serve_project import general_server, served_http, write_project

from toolsift.agent import ToolCall
from toolsift.toolbox import Toolbox

LIMIT = 64
LONG = "word " * 100


def project(tmp_path: Path) -> Path:
    """A gateway and an agent profile with the same limit, in front of a trusted server (nothing fenced)."""
    return write_project(
        tmp_path,
        serve={"gateway": True, "maxResultBytes": LIMIT},
        agents={"default": {"permissions": {"level": "execute"}, "limits": {"maxResultBytes": LIMIT}}},
        servers={"general": general_server(trust="trusted")},
    )


def texts(content: list[types.ContentBlock]) -> list[str]:
    return [block.text for block in content if isinstance(block, types.TextContent)]


@pytest.mark.usefixtures("examples_in_process")
async def test_a_gateway_cuts_a_big_result_exactly_as_the_agent_loop_does(tmp_path: Path) -> None:
    config = project(tmp_path)
    async with served_http(config) as (url, _), Client(url, mode="legacy") as client:
        served = await client.call_tool("general__echo", {"text": LONG})
    async with Toolbox.from_config(config) as box:
        message = await box.conversation().call_tool(ToolCall("1", "general__echo", {"text": LONG}))
    kept, note = texts(served.content)
    assert LONG.startswith(kept) and len(kept.encode()) <= LIMIT
    assert note.startswith(f"[toolsift: this result was cut to fit the limit of {LIMIT} bytes")
    assert texts(message.result.content) == [kept, note]
    # echo's structured twin was left out: the cut is an error result, which a client shows rather than
    # rejecting a success that lacks the structured content its outputSchema promises.
    assert served.structured_content is None and message.result.structured_content is None
    assert served.is_error and message.result.is_error and "the structured content" in note


@pytest.mark.usefixtures("examples_in_process")
async def test_a_result_within_the_limit_is_served_whole(tmp_path: Path) -> None:
    async with served_http(project(tmp_path)) as (url, _), Client(url, mode="legacy") as client:
        served = await client.call_tool("general__echo", {"text": "short"})
    assert not served.is_error and texts(served.content) == ["short"]
