"""The gateway at 2026-07-28: an upstream's list changes reach listen streams, its log lines only who asked.

The upstream is ``interop/fixture_2026.py`` over HTTP, whose ``test_trigger_*_change`` tools add or
remove a tool or prompt and announce it, and whose ``test_logging_tool`` logs a line.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import mcp.types as types
from mcp import Client
from mcp.shared.subscriptions import PromptsListChanged, ToolsListChanged
from serve_project import served_http, write_project
from servers import http_server

FIXTURE_2026 = Path(__file__).resolve().parents[2] / "interop" / "fixture_2026.py"


def gateway_of(tmp_path: Path, upstream: str) -> Path:
    # The fixture adds a tool after its first listing on purpose: accepted as it comes, not held (pinTools).
    server = {"url": upstream, "internalOnly": False, "pinTools": "accept"}
    return write_project(tmp_path, serve={"gateway": True, "prefixNames": False}, servers={"conformance": server})


async def test_gateway_tells_listen_streams_when_an_upstreams_tools_and_prompts_change(tmp_path: Path) -> None:
    async with (
        http_server(str(FIXTURE_2026)) as upstream,
        served_http(gateway_of(tmp_path, upstream)) as (url, _),
        Client(url) as client,
    ):
        before = {prompt.name for prompt in (await client.list_prompts()).prompts}
        for trigger, expected in (
            ("test_trigger_prompt_change", PromptsListChanged),
            ("test_trigger_tool_change", ToolsListChanged),
        ):
            async with client.listen(prompts_list_changed=True, tools_list_changed=True) as changes:
                await client.call_tool(trigger, {})
                with anyio.fail_after(20):
                    async for event in changes:
                        if isinstance(event, expected):
                            break
        after = {prompt.name for prompt in (await client.list_prompts()).prompts}
        tools = {tool.name for tool in (await client.list_tools(cache_mode="bypass")).tools}
    assert after ^ before == {"test_changing"}
    assert "test_changing" in tools


async def test_gateway_passes_an_upstreams_log_lines_only_to_requests_that_asked_for_them(tmp_path: Path) -> None:
    heard: list[tuple[str, object]] = []

    def recorder(who: str) -> Callable[[types.LoggingMessageNotificationParams], Awaitable[None]]:
        async def record(params: types.LoggingMessageNotificationParams) -> None:
            heard.append((who, params.data))

        return record

    async with (
        http_server(str(FIXTURE_2026)) as upstream,
        served_http(gateway_of(tmp_path, upstream)) as (url, _),
        Client(url, logging_callback=recorder("quiet")) as quiet,
        Client(url, logging_callback=recorder("asking"), log_level="info") as asking,
    ):
        assert (await quiet.call_tool("test_logging_tool", {})).is_error is False
        assert (await asking.call_tool("test_logging_tool", {})).is_error is False
    assert heard == [("asking", "test_logging_tool ran")]
