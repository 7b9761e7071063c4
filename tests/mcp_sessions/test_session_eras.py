"""An HTTP server under ``protocol: auto``, for a session that answers servers' requests: one connection per era.

The session connects as the SDK does (``server/discover`` first) and keeps a
handshake-era connection beside the 2026-07-28 one, opened at first need, for
calls whose caller answers questions mid-call, and for a tool written against
the classic API that asked mid-call over 2026-07-28 and was refused. The
servers run in this process; the config says HTTP, which is what decides.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp.client import Transport
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.message import SessionMessage
from mcp_helpers import FAST, example_server, faulty, in_memory, stdio_server, wait_for
from pydantic import BaseModel
from servers import http_server

from toolsift.config import HttpServer
from toolsift.mcp_sessions import ClientCallbacks, McpSession, SessionOptions
from toolsift.mcp_sessions._internal import SessionState
from toolsift.mcp_sessions._transport import MemoryTransport, TransportContext
from toolsift.registry import ToolRegistry

FIXTURE = str(Path(__file__).resolve().parents[2] / "interop" / "fixture_2026.py")


class Recorded:
    """A server in this process, each connection's requests recorded in order (method names)."""

    def __init__(self, server: Any) -> None:
        self._inner = MemoryTransport(server)
        self.connections: list[list[str]] = []
        self.writes: list[Any] = []  # each connection's write stream, to end it from the test
        self.closed = 0

    async def open(self, stack: AsyncExitStack, context: TransportContext) -> Transport:
        methods: list[str] = []
        self.connections.append(methods)
        return self._recording(await self._inner.open(stack, context), methods)

    @asynccontextmanager
    async def _recording(self, inner: Transport, methods: list[str]) -> AsyncIterator[Any]:
        async with inner as (read, write):
            self.writes.append(write)
            try:
                yield read, _Sent(write, methods)
            finally:
                self.closed += 1


class _Sent:
    """A write stream that notes the method of each request passing through."""

    def __init__(self, inner: Any, methods: list[str]) -> None:
        self._inner = inner
        self._methods = methods

    async def send(self, message: SessionMessage) -> None:
        if isinstance(message.message, types.JSONRPCRequest):
            self._methods.append(message.message.method)
        await self._inner.send(message)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Sent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


async def elicit(server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
    asked.append(params.message)
    return types.ElicitResult(action="accept", content={"username": "ada", "email": "a@b.c"})


asked: list[str] = []


@pytest.fixture(autouse=True)
def _forget_questions() -> None:
    asked.clear()


def http_session(recorded: Recorded, *, registry: ToolRegistry | None = None) -> McpSession:
    config = HttpServer(url="http://127.0.0.1:9/mcp", internal_only=False, trust="trusted").with_name("classic")
    options = SessionOptions(
        restart=FAST.restart, callbacks=ClientCallbacks(elicitation=elicit), transports={"classic": recorded}
    )
    return McpSession(config, registry=registry, options=options)


async def test_an_http_session_that_answers_requests_begins_with_discover_not_the_handshake() -> None:
    recorded = Recorded(example_server("conformance.py"))
    async with http_session(recorded) as session:
        assert session.protocol_version == "2026-07-28"
        assert not (await session.call_tool("test_simple_text")).is_error
    assert len(recorded.connections) == 1
    assert recorded.connections[0][0] == "server/discover"
    assert "initialize" not in recorded.connections[0]


def asking_server() -> MCPServer:
    """A classic server whose tools ask mid-call: one read-only, one that may act before it asks."""
    server = MCPServer("asking")
    effects: list[str] = []

    @server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
    async def look_up(message: str, ctx: Context) -> str:
        answer = await ctx.elicit(message=message, schema=Person)
        return f"found {answer.data.email if answer.action == 'accept' else None}"

    @server.tool()
    async def record(message: str, ctx: Context) -> str:
        effects.append(message)  # acts, then asks
        await ctx.elicit(message=message, schema=Person)
        return f"recorded {len(effects)}"

    server.effects = effects  # type: ignore[attr-defined]
    return server


class Person(BaseModel):
    username: str
    email: str


async def test_a_read_only_tool_that_asks_mid_call_is_called_again_in_the_handshake_era() -> None:
    recorded = Recorded(asking_server())
    async with http_session(recorded) as session:
        first = await session.call_tool("look_up", {"message": "who?"})
        second = await session.call_tool("look_up", {"message": "and now?"})
        assert session.protocol_version == "2026-07-28"
    assert first.text_content() == "found a@b.c" and not second.is_error
    assert asked == ["who?", "and now?"]  # the refused attempt asked nobody
    modern, handshake = recorded.connections
    assert modern.count("tools/call") == 1  # refused there once; the later call went to the handshake era at once
    assert handshake[0] == "initialize" and handshake.count("tools/call") == 2


async def test_a_tool_that_may_have_acted_before_it_asked_is_not_run_twice() -> None:
    server = asking_server()
    recorded = Recorded(server)
    async with http_session(recorded) as session:
        refused = await session.call_tool("record", {"message": "who?"})
        again = await session.call_tool("record", {"message": "and now?"})
    assert refused.is_error and refused.meta["mcp_failure"] == "asked_mid_call"
    assert (
        "It was not run again" in refused.text_content()
        and "'record' of MCP server 'classic'" in refused.text_content()
    )
    assert again.text_content() == "recorded 2"  # the person's retry ran once, in the handshake era
    assert server.effects == ["who?", "and now?"] and asked == ["and now?"]  # type: ignore[attr-defined]
    modern, handshake = recorded.connections
    assert modern.count("tools/call") == 1 and handshake.count("tools/call") == 1


async def test_a_caller_that_answers_mid_call_goes_to_the_handshake_era_at_once() -> None:
    recorded = Recorded(example_server("conformance.py"))
    async with http_session(recorded) as session:
        result = await session.call_tool("test_elicitation", {"message": "who?"}, era="handshake")
        simple = await session.call_tool("test_simple_text")
    assert not result.is_error and asked == ["who?"]
    modern, handshake = recorded.connections
    assert modern.count("tools/call") == 1 and handshake.count("tools/call") == 1  # the plain call stayed in 2026
    assert not simple.is_error


async def test_closing_the_session_closes_both_connections() -> None:
    recorded = Recorded(example_server("conformance.py"))
    async with http_session(recorded) as session:
        await session.call_tool("test_simple_text", era="handshake")
        assert len(recorded.connections) == 2 and recorded.closed == 0
    assert session.state is SessionState.CLOSED
    assert recorded.closed == 2


async def test_draining_the_session_closes_both_connections() -> None:
    recorded = Recorded(example_server("conformance.py"))
    async with http_session(recorded) as session:
        await session.call_tool("test_simple_text", era="handshake")
        await session.drain(1.0)
        assert recorded.closed == 2


async def test_losing_the_handshake_era_connection_reconnects_the_session() -> None:
    recorded = Recorded(example_server("conformance.py"))
    async with http_session(recorded) as session:
        await session.call_tool("test_simple_text", era="handshake")
        await recorded.writes[1].aclose()  # the server's run on the handshake-era connection ends with its input
        await wait_for(session, lambda s: s.restarts == 1 and s.state is SessionState.READY)
        assert recorded.closed == 2  # the 2026-07-28 connection was closed with it
        again = await session.call_tool("test_elicitation", {"message": "still there?"}, era="handshake")
    assert not again.is_error and asked == ["still there?"]
    assert len(recorded.connections) == 4  # both eras, twice


async def test_a_list_change_heard_on_both_connections_is_listed_once() -> None:
    registry = ToolRegistry()
    recorded = Recorded(faulty())
    async with http_session(recorded, registry=registry) as session:
        await session.call_tool("add_tool", {"name": "zebra"}, era="handshake")  # on the handshake-era connection
        await wait_for(session, lambda s: "classic__zebra" in registry)
        await session.call_tool("add_tool", {"name": "yak"})  # on the 2026-07-28 one
        await wait_for(session, lambda s: "classic__yak" in registry)
    # The first listing and one per change, on the 2026-07-28 connection (the SDK's client lists once on the
    # other to learn the output schemas of the tools it calls there).
    assert recorded.connections[0].count("tools/list") == 3


async def test_a_stdio_server_keeps_one_handshake_era_connection() -> None:
    config = stdio_server("classic", "conformance.py")
    options = in_memory(
        {"classic": example_server("conformance.py")}, SessionOptions(callbacks=ClientCallbacks(elicitation=elicit))
    )
    async with McpSession(config, options=options) as session:
        result = await session.call_tool("test_elicitation", {"message": "who?"}, era="handshake")
        assert session.protocol_version == "2025-11-25"
    assert not result.is_error and asked == ["who?"]


async def test_a_server_of_2026_alone_takes_a_mid_call_caller_on_its_one_connection() -> None:
    async def sample(server: str, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(role="assistant", content=types.TextContent(text="ok"), model="test")

    options = SessionOptions(callbacks=ClientCallbacks(sampling=sample))
    async with (
        http_server(FIXTURE, "--modern-only", "refuse") as url,
        McpSession(HttpServer(url=url).with_name("modern"), options=options) as session,
    ):
        result = await session.call_tool("test_input_required_result_sampling", {}, era="handshake")
        assert session.protocol_version == "2026-07-28"
        handshake = session._sup.handshake
        assert handshake is not None and handshake.refused is not None  # it refused the handshake era
    assert not result.is_error, result.text_content()
