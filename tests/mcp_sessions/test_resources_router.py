"""The resource router tools and resource context, against real servers over stdio."""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import mcp.types as types
import pytest
from mcp_helpers import example_server, in_memory, stdio_server

from toolsift.config import ServerConfig, StdioServer
from toolsift.mcp_sessions import McpSession
from toolsift.mcp_sessions._internal import (
    ListMcpResources,
    ReadMcpResource,
    ServerCatalog,
    SessionState,
    resource_context,
)
from toolsift.mcp_sessions._resources import cut_utf8
from toolsift.registry import Level, ToolContext, ToolRegistry, ToolResult, TurnScope

# A server with the resources the edge cases need: multi-byte text, a blob, one that fails, many small ones.
RESOURCE_SERVER = """
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("res", log_level="WARNING")


@mcp.resource("text://greek", name="greek", mime_type="text/plain", description="Greek letters.")
def greek() -> str:
    return "\\u03b1\\u03b2\\u03b3" * 100


@mcp.resource("text://emoji", name="emoji", mime_type="text/plain")
def emoji() -> str:
    return "ab\\U0001f600" * 50


@mcp.resource("blob://bytes", name="bytes", mime_type="application/octet-stream")
def blob() -> bytes:
    return bytes(range(256))


@mcp.resource("fail://boom", name="boom")
def boom() -> str:
    raise RuntimeError("boom")


def item(i):
    def read() -> str:
        return "item %d" % i
    return read


for i in range(30):
    mcp.resource("item://%d" % i, name="item%d" % i)(item(i))


@mcp.resource("item://tpl/{key}", name="tpl")
def tpl(key: str) -> str:
    return key


mcp.run("stdio")
"""


def resource_server(**fields: Any) -> ServerConfig:
    return StdioServer(command=sys.executable, args=("-c", RESOURCE_SERVER), **fields).with_name("res")


@pytest.fixture(scope="module")
async def sessions() -> AsyncIterator[dict[str, McpSession]]:
    configs = [
        resource_server(trust="trusted", resources=True, resource_filter=("text://*", "blob://*", "fail://*")),
        stdio_server("general", "general.py", resources=True, resource_filter=("docs://readme",)),
        stdio_server("later", "general.py", lazy=True),
        stdio_server("broken", "faulty.py", "--crash-at-start", restart_on_crash=False, resources=True),
    ]
    # The example servers run in this process; the one that cannot start is a child that exits at once.
    options = in_memory(dict.fromkeys(("general", "later"), example_server("general.py")))
    async with AsyncExitStack() as stack:
        opened = {
            config.name: await stack.enter_async_context(McpSession(config, options=options)) for config in configs
        }
        assert opened["broken"].state is SessionState.ERROR
        yield opened


CTX = ToolContext(call_id="test")


async def call(tool: ListMcpResources | ReadMcpResource, **args: Any) -> tuple[ToolResult, dict[str, Any]]:
    result = await tool.call(args, CTX)
    assert isinstance(result.structured_content, dict) or result.is_error, result
    return result, result.structured_content or {}


async def test_list_covers_every_server_and_collects_per_server_errors(sessions: dict[str, McpSession]) -> None:
    result, payload = await call(ListMcpResources(sessions))
    assert not result.is_error
    by_server: dict[str, set[str]] = {}
    for entry in payload["resources"]:
        by_server.setdefault(entry["server"], set()).add(entry["uri"])
    assert by_server["general"] == {"docs://readme", "docs://changelog"}
    assert by_server["later"] == {"docs://readme", "docs://changelog"}  # a lazy server is started for it
    assert len(by_server["res"]) == 34
    assert {(t["server"], t["uri_template"]) for t in payload["templates"]} == {
        ("general", "greeting://{name}"),
        ("later", "greeting://{name}"),
        ("res", "item://tpl/{key}"),
    }
    greek = next(e for e in payload["resources"] if e["uri"] == "text://greek")
    assert greek == {
        "server": "res",
        "uri": "text://greek",
        "name": "greek",
        "description": "Greek letters.",
        "mime_type": "text/plain",
    }
    assert payload["truncated"] is False
    assert len(payload["errors"]) == 1 and payload["errors"][0]["server"] == "broken"
    assert payload["errors"][0]["error"].startswith("ServerUnavailable: MCP server 'broken' is down: could not start")


async def test_list_caps_entries_round_robin_across_servers(sessions: dict[str, McpSession]) -> None:
    _, payload = await call(ListMcpResources(sessions, max_entries=6))
    entries = [*payload["resources"], *payload["templates"]]
    assert len(entries) == 6 and payload["truncated"] is True
    assert {e["server"] for e in entries} == {"res", "general", "later"}
    _, payload = await call(ListMcpResources(sessions, max_entries=6), max=100)  # never above the configured cap
    assert len(payload["resources"]) + len(payload["templates"]) == 6
    _, payload = await call(ListMcpResources(sessions), server="res", max=2)
    assert [e["uri"] for e in payload["resources"]] == ["text://greek", "text://emoji"] and payload["truncated"]


async def test_list_and_read_refuse_an_unknown_server(sessions: dict[str, McpSession]) -> None:
    result = await ListMcpResources(sessions).call({"server": "nope"}, CTX)
    assert result.is_error and result.text_content() == "No MCP server 'nope'; servers: broken, general, later, res"
    result = await ReadMcpResource({}).call({"server": "nope", "uri": "x://y"}, CTX)
    assert result.is_error and result.text_content() == "No MCP server 'nope'; servers: none are connected"


async def test_read_cuts_text_on_a_character_boundary(sessions: dict[str, McpSession]) -> None:
    tool = ReadMcpResource(sessions)
    _, payload = await call(tool, server="res", uri="text://greek", max_bytes=5)
    assert payload["contents"] == [
        {"uri": "text://greek", "mime_type": "text/plain", "text": "\u03b1\u03b2", "truncated": True}
    ]
    assert payload["truncated"] is True
    _, payload = await call(tool, server="res", uri="text://emoji", max_bytes=5)
    assert payload["contents"][0]["text"] == "ab"
    _, payload = await call(tool, server="res", uri="text://emoji")
    assert payload["contents"][0]["text"] == "ab\U0001f600" * 50 and payload["truncated"] is False
    assert "truncated" not in payload["contents"][0]


async def test_read_passes_blobs_as_base64_with_their_length(sessions: dict[str, McpSession]) -> None:
    tool = ReadMcpResource(sessions)
    _, payload = await call(tool, server="res", uri="blob://bytes")
    content = payload["contents"][0]
    assert base64.b64decode(content["blob"]) == bytes(range(256)) and content["blob_length"] == 256
    assert content["mime_type"] == "application/octet-stream" and not payload["truncated"]
    _, payload = await call(tool, server="res", uri="blob://bytes", max_bytes=100)
    content = payload["contents"][0]
    assert len(content["blob"]) == 100 and base64.b64decode(content["blob"]) == bytes(range(75))
    assert content["blob_length"] == 256 and content["truncated"] is True


async def test_read_reports_server_failures_in_errors(sessions: dict[str, McpSession]) -> None:
    tool = ReadMcpResource(sessions)
    result, payload = await call(tool, server="res", uri="fail://boom")
    assert result.is_error and payload["contents"] == []
    assert payload["errors"][0]["server"] == "res" and payload["errors"][0]["error"].startswith("MCPError")
    result, payload = await call(tool, server="broken", uri="docs://readme")
    assert result.is_error
    assert payload["errors"][0]["error"].startswith("ServerUnavailable: MCP server 'broken' is down")


async def test_read_fences_untrusted_servers_and_keeps_structured_content(sessions: dict[str, McpSession]) -> None:
    result, payload = await call(ReadMcpResource(sessions), server="general", uri="greeting://ada")
    assert payload["contents"][0]["text"] == "Hello, ada!"
    text = result.text_content()
    assert text.startswith("<<<UNTRUSTED TOOL RESULT id=") and "server=general tool=ReadMcpResource" in text
    assert json.loads(text.splitlines()[2]) == payload
    trusted, _ = await call(ReadMcpResource(sessions), server="res", uri="item://tpl/k")
    assert json.loads(trusted.text_content())["contents"][0]["text"] == "k"


async def test_router_tools_are_read_only_registry_tools(sessions: dict[str, McpSession]) -> None:
    registry = ToolRegistry()
    registry.register_many([ListMcpResources(sessions), ReadMcpResource(sessions)])
    plan = TurnScope(read_only=True)
    assert {t.spec.name for t in registry.visible_tools(plan)} == {"ListMcpResources", "ReadMcpResource"}
    for tool in registry:
        assert tool.spec.read_only and tool.spec.required_level is Level.READ
    result = await registry.execute("ReadMcpResource", {"server": "res", "uri": "item://3"}, plan)
    assert json.loads(result.text_content())["contents"][0]["text"] == "item 3"
    assert repr(registry.get("ListMcpResources")) == "ListMcpResources(max_entries=200)"
    assert repr(registry.get("ReadMcpResource")) == "ReadMcpResource(max_bytes=262144)"


def test_router_tools_reject_caps_below_one() -> None:
    with pytest.raises(ValueError, match="max_entries must be at least 1, got 0"):
        ListMcpResources({}, max_entries=0)
    with pytest.raises(ValueError, match="max_bytes must be at least 1, got 0"):
        ReadMcpResource({}, max_bytes=0)


def test_cut_utf8_never_splits_a_character() -> None:
    text = "a\u00e9\u20ac\U0001f600"  # 1, 2, 3 and 4 bytes
    assert [cut_utf8(text, n)[0] for n in range(11)] == [
        "",
        "a",
        "a",
        "a\u00e9",
        "a\u00e9",
        "a\u00e9",
        "a\u00e9\u20ac",
        "a\u00e9\u20ac",
        "a\u00e9\u20ac",
        "a\u00e9\u20ac",
        "a\u00e9\u20ac\U0001f600",
    ]
    assert cut_utf8(text, 10) == (text, False) and cut_utf8(text, 9)[1] is True


async def test_resource_context_wraps_the_chosen_resources(sessions: dict[str, McpSession]) -> None:
    context = await resource_context(sessions)
    assert context.startswith("# Resources from MCP servers\n\n")
    assert "## general: docs://readme\n<<<UNTRUSTED TOOL RESULT id=" in context
    assert "server=general tool=resource:docs://readme>>>" in context
    assert "general: an everyday MCP server" in context and "docs://changelog" not in context
    assert "## res: text://greek\n" + "\u03b1\u03b2\u03b3" * 100 in context  # trusted: not fenced
    assert "## res: blob://bytes\n[binary content application/octet-stream not included]" in context
    assert "## res: fail://boom\n(could not be read: MCPError" in context
    assert "## broken\n(resources unavailable: ServerUnavailable: MCP server 'broken' is down" in context
    assert "later" not in context and "item://" not in context


async def test_resource_context_stops_at_its_byte_budget(sessions: dict[str, McpSession]) -> None:
    context = await resource_context({"res": sessions["res"]}, max_bytes=6)
    assert "## res: text://greek\n\u03b1\u03b2\u03b3\n[cut: the resource context is full]" in context
    assert "## res: text://emoji\n(left out: the resource context is full)" in context
    assert await resource_context({"later": sessions["later"]}) == ""
    with pytest.raises(ValueError, match="max_bytes must be at least 1, got 0"):
        await resource_context(sessions, max_bytes=0)


class StaticSession:
    """A ready session of toolsift's ResourceSession protocol whose one resource has several contents."""

    def __init__(self, contents: list[types.TextResourceContents | types.BlobResourceContents]) -> None:
        self.config = StdioServer(command="static", trust="trusted").with_name("static")
        self.catalog = ServerCatalog()
        self._contents = contents

    async def ensure_started(self) -> None:
        return None

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        return types.ReadResourceResult(contents=self._contents)


async def test_read_shares_its_budget_across_contents_and_flags_bad_blobs() -> None:
    session = StaticSession(
        [
            types.TextResourceContents(uri="s://a", text="12345"),
            types.BlobResourceContents(uri="s://b", blob="not base64!"),
            types.TextResourceContents(uri="s://c", text="67890"),
            types.TextResourceContents(uri="s://d", text="never"),
        ]
    )
    _, payload = await call(ReadMcpResource({"static": session}), server="static", uri="s://a", max_bytes=8)
    assert payload["contents"] == [
        {"uri": "s://a", "text": "12345"},
        {"uri": "s://b", "error": "the server sent a blob that is not valid base64"},
        {"uri": "s://c", "text": "678", "truncated": True},
    ]
    assert payload["truncated"] is True and payload["omitted"] == 1
