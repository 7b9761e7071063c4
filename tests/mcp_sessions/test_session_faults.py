"""Impolite servers: each fault of examples/servers/faulty.py ends in a clear result or warning, never a hang."""

from __future__ import annotations

import logging

import mcp.types as types
import pytest
from mcp_helpers import FAST, example_server, faulty, in_memory, local_server, stdio_server, wait_for_state
from waits import CHILD_SECONDS

from toolsift import ServerUnavailable
from toolsift.config import StdioServer
from toolsift.mcp_sessions import McpSession, McpSessionGroup
from toolsift.mcp_sessions._internal import SessionState
from toolsift.registry import ToolRegistry, ToolResult


def text(result: ToolResult, index: int = 0) -> str:
    block = result.content[index]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_session_server_crashing_at_start_is_an_error_and_others_go_on() -> None:
    registry = ToolRegistry()
    # The crash is a real child's; its healthy neighbour runs in this process.
    async with McpSessionGroup(registry, options=in_memory({"general": example_server("general.py")})) as group:
        sessions = await group.start_all(
            [
                stdio_server("broken", "faulty.py", "--crash-at-start", internal_only=False),
                stdio_server("general", "general.py", internal_only=False),
            ]
        )
        broken, general = sessions["broken"], sessions["general"]
        assert broken.state is SessionState.ERROR
        assert broken.reason == (
            "could not start: the connection closed (the server exited or dropped it); "
            "stderr: faulty: exiting before initialize (--crash-at-start)"
        )
        assert broken.restarts == 0
        assert general.state is SessionState.READY
        assert registry.servers() == ["general"]
        assert "\nstill here\n" in text(await registry.execute("general__echo", {"text": "still here"}))
        with pytest.raises(ServerUnavailable, match=r"'broken' is down: could not start"):
            await broken.call_tool("echo", {"text": "x"})


async def test_session_command_not_found_is_named() -> None:
    async with McpSession(
        stdio_server("missing", "general.py").model_copy(update={"command": "/nonexistent/toolsift-server"})
    ) as session:
        assert session.state is SessionState.ERROR
        assert session.reason == "could not start: command '/nonexistent/toolsift-server' was not found"


async def test_session_server_that_never_answers_times_out() -> None:
    async with McpSession(stdio_server("hang", "faulty.py", "--hang", timeout=0.5)) as session:
        assert session.state is SessionState.ERROR
        assert session.reason == "could not start: it did not finish connecting within 0.5s (timeout)"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_session_slow_initialize_is_waited_for(mode: str) -> None:
    config = stdio_server("slow", "faulty.py", "--init-delay", "0.3", protocol=mode)
    async with McpSession(config, options=in_memory({"slow": faulty(init_delay=0.3)})) as session:
        assert session.state is SessionState.READY


async def test_session_json_rpc_error_for_a_tool_failure_is_a_clear_result() -> None:
    config = stdio_server("rpc", "faulty.py", "--rpc-errors", protocol="legacy")
    async with McpSession(config, options=in_memory({"rpc": faulty(rpc_errors=True)})) as session:
        result = await session.call_tool("fail", {"message": "disk full"})
        assert result.is_error
        assert text(result) == (
            "MCP server 'rpc' failed tool 'fail' with JSON-RPC error 0 instead of a tool result; "
            "the server's message follows."
        )
        assert text(result, 1) == "disk full"
        assert result.meta["mcp_failure"] == "rpc_error"
        assert text(await session.call_tool("echo", {"text": "fine"})) == "fine"


async def test_session_tool_reporting_is_error_keeps_the_servers_content() -> None:
    async with McpSession(stdio_server("faulty", "faulty.py"), options=in_memory({"faulty": faulty()})) as session:
        result = await session.call_tool("fail", {"message": "bad input"})
    assert result.is_error and text(result) == "bad input"
    assert "mcp_failure" not in result.meta


async def test_session_malformed_line_is_a_warning_and_calls_go_on(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="toolsift.mcp_sessions")
    async with McpSession(stdio_server("noisy", "faulty.py", "--malformed-after", "0")) as session:
        assert text(await session.call_tool("echo", {"text": "one"})) == "one"
        assert text(await session.call_tool("echo", {"text": "two"})) == "two"
        assert session.state is SessionState.READY
    warnings = [r.getMessage() for r in caplog.records if r.name == "toolsift.mcp_sessions"]
    assert any(
        "'noisy' wrote something that is not a JSON-RPC message; ignored (Invalid JSON" in w
        and "this is not JSON-RPC {" in w
        for w in warnings
    )


async def test_session_error_without_id_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="toolsift.mcp_sessions")
    async with McpSession(stdio_server("rude", "faulty.py", "--notification-error", protocol="legacy")) as session:
        assert text(await session.call_tool("echo", {"text": "ok"})) == "ok"
    warnings = [r.getMessage() for r in caplog.records if r.name == "toolsift.mcp_sessions"]
    assert any(
        "'rude' sent an error response without a request id (JSON-RPC error -32601: "
        "'Method not found: notifications/initialized')" in w
        for w in warnings
    )


async def test_session_capabilities_advertised_but_missing_are_said_once_at_their_level(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="toolsift.mcp_sessions")
    config = stdio_server("liar", "faulty.py", "--fake-capabilities")
    async with McpSession(config, options=in_memory({"liar": faulty(fake_capabilities=True)})) as session:
        assert session.state is SessionState.READY
        assert session.catalog.resources == () and session.catalog.prompts == ()
        assert len(session.catalog.tools) == 6
    said = [(r.levelno, r.getMessage()) for r in caplog.records if "'liar' advertises" in r.getMessage()]
    # Never implemented (method not found): harmless and the same at every start, so not a warning.
    assert [
        level for level, message in said if "resources but listing them failed (JSON-RPC error -32601" in message
    ] == [logging.INFO]
    assert [
        level for level, message in said if "prompts but listing them failed (JSON-RPC error -32603" in message
    ] == [logging.WARNING]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_session_old_protocol_server_works(mode: str) -> None:
    async with McpSession(stdio_server("old", "faulty.py", "--old-protocol", protocol=mode)) as session:
        assert session.protocol_version == "2024-11-05"
        assert text(await session.call_tool("echo", {"text": "from 2024"})) == "from 2024"


async def test_session_slow_replies_hit_the_tool_timeout() -> None:
    config = stdio_server("slow", "faulty.py", "--delay", "5", tool_timeout=0.3)
    async with McpSession(config, options=in_memory({"slow": faulty(delay=5)})) as session:
        result = await session.call_tool("echo", {"text": "x"})
        assert result.is_error and result.meta["mcp_failure"] == "timeout"
        assert text(result) == (
            "Tool 'echo' of MCP server 'slow' did not answer within 0.3s; the server was told to cancel it."
        )
        assert session.state is SessionState.READY


async def test_session_faulty_neighbours_leave_the_healthy_server_alone() -> None:
    registry = ToolRegistry()
    faults = {
        "crash_at_start": ("--crash-at-start",),
        "hang": ("--hang",),
        "malformed": ("--malformed-after", "0"),
        "rpc": ("--rpc-errors",),
        "crashy": ("--crash-after", "0"),
    }
    # Generous timeouts: six SDK servers importing at once on a small machine take a while.
    configs = [
        stdio_server(
            name,
            "faulty.py",
            *args,
            protocol="legacy",
            timeout=2 if name == "hang" else CHILD_SECONDS,  # the hang's deadline is what it tests
            restart_on_crash=False,
            internal_only=False,
        )
        for name, args in faults.items()
    ]
    configs.append(stdio_server("general", "general.py", internal_only=False, timeout=CHILD_SECONDS))
    # The process faults run as real children; the JSON-RPC errors and the healthy server run in this process.
    options = in_memory({"rpc": faulty(rpc_errors=True), "general": example_server("general.py")})
    async with McpSessionGroup(registry, options=options) as group:
        await group.start_all(configs)
        assert {name for name, s in group.items() if s.state is SessionState.ERROR} == {"crash_at_start", "hang"}
        for name in ("malformed", "rpc", "crashy"):
            await registry.execute(
                f"{name}__fail" if name == "rpc" else f"{name}__echo",
                {"message": "x"} if name == "rpc" else {"text": "x"},
            )
        await wait_for_state(group["crashy"], SessionState.ERROR)
        assert "\nfine\n" in (await registry.execute("general__echo", {"text": "fine"})).text_content()
        assert group["general"].state is SessionState.READY and group["general"].restarts == 0


async def test_session_pinned_to_2026_against_a_handshake_server_says_why() -> None:
    async with McpSession(local_server("raw", "raw_server.py", protocol="2026-07-28"), options=FAST) as session:
        assert session.state is SessionState.ERROR
        assert session.reason == (
            "could not start: the config pins protocol 2026-07-28, which the server does not "
            "speak (server/discover: Method not found: server/discover); use protocol: auto "
            "to fall back to the handshake"
        )


async def test_a_server_that_could_not_start_says_when_it_starts_again(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="toolsift.mcp_sessions")
    async with McpSession(stdio_server("broken", "faulty.py", "--crash-at-start")) as session:
        assert session.state is SessionState.ERROR
    assert "for good" not in caplog.text
    assert (
        "MCP server 'broken' is down and is not restarted: could not start: the connection closed" in caplog.text
        and "it starts again when toolsift starts again, or at a hot reload that changes its entry" in caplog.text
    )


async def test_a_program_that_is_not_an_mcp_server_is_asked_about() -> None:
    # cat sends the handshake back; the client refuses the echoed request as "Method not found".
    async with McpSession(StdioServer(command="cat", timeout=CHILD_SECONDS).with_name("cat")) as session:
        assert session.state is SessionState.ERROR
        assert session.reason == (
            "could not start: the program did not answer the MCP handshake: is it an MCP server? "
            "(it answered: JSON-RPC error -32601: Method not found)"
        )
