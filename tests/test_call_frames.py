"""How deep one tool call runs through toolsift: its frames between each entry and the SDK's own call.

A call of an MCP server's tool from the agent loop (``Conversation.call_tool``)
and from a served client (``ToolsiftServer._call_tool``, the SDK server's
handler) reaches the upstream server through the SDK's ``Client.call_tool``
(or, for what a gateway sends as its client, the SDK's raw request). A
profile hook sees the SDK function entered and walks the stack back to the
entry, counting toolsift's frames; the test server is the example
``general.py``, in this process.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import pytest
from mcp import Client
from serve_project import general_server, served_http, text, write_project

import toolsift
from toolsift.agent import Conversation, ToolCall
from toolsift.serve._server import ToolsiftServer
from toolsift.toolbox import Toolbox

PACKAGE = str(Path(toolsift.__file__).resolve().parent)
SDK_CALLS = {"call_tool", "send_raw_request"}
AGENT_LOOP_MOST = 5
GATEWAY_MOST = 8


def _ours(frame: FrameType) -> bool:
    return frame.f_code.co_filename.startswith(PACKAGE)


def _sdk_call(frame: FrameType) -> bool:
    code = frame.f_code
    return code.co_name in SDK_CALLS and f"{os.sep}mcp{os.sep}" in code.co_filename and not _ours(frame)


@contextmanager
def frames_to_sdk(entry: CodeType) -> Iterator[list[list[str]]]:
    """Each SDK call made below ``entry`` while inside: the toolsift functions between, innermost first."""
    found: list[list[str]] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or not _sdk_call(frame) or frame.f_back is None or not _ours(frame.f_back):
            return
        chain: list[str] = []
        caller: FrameType | None = frame.f_back
        while caller is not None:
            if _ours(caller):
                chain.append(caller.f_code.co_qualname)
            if caller.f_code is entry:
                if chain not in found:
                    found.append(chain)
                return
            caller = caller.f_back

    sys.setprofile(profile)
    try:
        yield found
    finally:
        sys.setprofile(None)


@pytest.mark.usefixtures("examples_in_process")
async def test_a_call_from_the_agent_loop_runs_through_at_most_five_toolsift_frames(tmp_path: Path) -> None:
    config = {"tools": {"mcpServers": {"general": general_server()}}}
    path = tmp_path / "toolsift.json"
    path.write_text(json.dumps(config))
    async with Toolbox.from_config(path) as box:
        conversation = box.conversation()
        await conversation.call_tool(ToolCall("warm", "general__echo", {"text": "warm"}))
        with frames_to_sdk(Conversation.call_tool.__code__) as found:
            message = await conversation.call_tool(ToolCall("1", "general__echo", {"text": "hi"}))
    assert "hi" in message.result.text_content()
    assert found, "no SDK call was seen below Conversation.call_tool"
    deepest = max(found, key=len)
    assert len(deepest) <= AGENT_LOOP_MOST, " <- ".join(deepest)


@pytest.mark.usefixtures("examples_in_process")
@pytest.mark.parametrize("upstream", ["legacy", "2026-07-28"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_call_from_a_served_client_runs_through_at_most_eight_toolsift_frames(
    tmp_path: Path, mode: str, upstream: str
) -> None:
    # Each era of client, to an upstream of each era: a 2026-07-28 pair passes the client's part on raw.
    servers = {"general": general_server(protocol=upstream)}
    config = write_project(tmp_path, serve={"gateway": True}, servers=servers)
    async with served_http(config) as (url, _), Client(url, mode=mode) as client:
        await client.call_tool("general__echo", {"text": "warm"})
        with frames_to_sdk(ToolsiftServer._call_tool.__code__) as found:
            echoed = await client.call_tool("general__echo", {"text": "through the gateway"})
    assert text(echoed) == "through the gateway"
    assert found, "no SDK call was seen below ToolsiftServer._call_tool"
    deepest = max(found, key=len)
    assert len(deepest) <= GATEWAY_MOST, " <- ".join(deepest)
