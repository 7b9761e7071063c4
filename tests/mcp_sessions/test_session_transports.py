"""The transport seam: the endpoint's type picks stdio, HTTP or SSE; ``SessionOptions.transports`` may name another."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_helpers import example_server, in_memory, stdio_server

from toolsift.config import HttpServer, ServerConfig, StdioServer
from toolsift.mcp_sessions import McpSession, McpSessionGroup
from toolsift.mcp_sessions._endpoint import Endpoint, HttpEndpoint, StdioEndpoint, resolve_endpoint
from toolsift.mcp_sessions._internal import SessionState
from toolsift.mcp_sessions._transport import HttpTransport, SseTransport, StdioTransport, transport_for
from toolsift.registry import ToolRegistry


@pytest.mark.parametrize(
    ("endpoint", "expected"),
    [
        (StdioEndpoint(command="server"), StdioTransport),
        (HttpEndpoint(url="http://127.0.0.1:1/mcp"), HttpTransport),
        (HttpEndpoint(kind="sse", url="http://127.0.0.1:1/sse"), SseTransport),
    ],
)
def test_transport_for_picks_the_endpoints_type(endpoint: Endpoint, expected: type) -> None:
    assert isinstance(transport_for(endpoint), expected)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (StdioServer(command="server", args=("--flag",)), StdioEndpoint),
        (HttpServer(url="https://h.example/mcp", headers={"X-Key": "k-secret"}), HttpEndpoint),
        (HttpServer(url="https://h.example/sse", type="sse"), HttpEndpoint),
    ],
)
def test_endpoint_is_of_the_configs_transport(config: ServerConfig, expected: type) -> None:
    endpoint = resolve_endpoint(config.with_name("s"))
    assert type(endpoint) is expected
    match endpoint:
        case StdioEndpoint():
            assert (endpoint.command, endpoint.args) == ("server", ("--flag",)) and "PATH" in endpoint.env
        case HttpEndpoint():
            assert isinstance(config, HttpServer)
            assert (endpoint.kind, endpoint.url) == (config.transport_kind, config.url)
            assert "k-secret" not in repr(endpoint)


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_session_reaches_a_server_of_this_process_in_memory(mode: str, version: str, tmp_path: Path) -> None:
    # The config names a command that does not exist: nothing is spawned when the server is reached in memory.
    config = StdioServer(command=str(tmp_path / "no-such-server"), protocol=mode, internal_only=False).with_name(
        "general"
    )
    registry, options = ToolRegistry(), in_memory({"general": example_server("general.py")})
    async with McpSession(config, registry=registry, options=options) as session:
        assert session.state is SessionState.READY and session.protocol_version == version
        assert (await session.call_tool("echo", {"text": "in memory"})).text_content() == "in memory"
        assert "3" in (await registry.execute("general__add", {"a": 1, "b": 2})).text_content()
        assert session.stderr_tail() == []
    assert session.state is SessionState.CLOSED and "general__echo" not in registry


async def test_group_reaches_only_the_servers_it_names_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIFT_TEST_HERE", "this process")
    async with McpSessionGroup(options=in_memory({"memory": example_server("general.py")})) as group:
        sessions = await group.start_all([stdio_server("memory", "general.py"), stdio_server("child", "general.py")])
        seen = {
            name: (await session.call_tool("env_get", {"name": "TOOLSIFT_TEST_HERE"})).text_content()
            for name, session in sessions.items()
        }
    # The server object runs in this process and sees its environment; the child gets a minimal one.
    assert seen == {"memory": "this process", "child": "<unset>"}
