"""A session that answers servers' requests reaches a server of MCP 2026-07-28 alone, whichever era it prefers.

Over HTTP such a session begins with ``server/discover``, as the SDK does. Over
stdio it prefers the handshake era under ``protocol: auto`` (servers written
against the classic API ask from inside a tool, which 2026-07-28 cannot carry);
a server that speaks only 2026-07-28 refuses ``initialize`` (an error, or its
own version as the answer), and the session then connects in 2026-07-28.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path

import mcp.types as types
import pytest
from mcp_helpers import stdio_server
from servers import http_server

from toolsift.config import HttpServer
from toolsift.mcp_sessions import ClientCallbacks, McpSession, SessionOptions
from toolsift.mcp_sessions._endpoint import resolve_endpoint
from toolsift.mcp_sessions._internal import SessionState
from toolsift.mcp_sessions._transport import transport_for

FIXTURE = str(Path(__file__).resolve().parents[2] / "interop" / "fixture_2026.py")


class ModernOnly:
    """The fixture serving 2026-07-28 alone, one child per way of refusing the handshake, started when a test
    first needs it and shared by the module's tests (each connects anew)."""

    def __init__(self, stack: AsyncExitStack) -> None:
        self._stack = stack
        self._urls: dict[str, str] = {}

    async def url(self, refusal: str) -> str:
        if refusal not in self._urls:
            self._urls[refusal] = await self._stack.enter_async_context(http_server(FIXTURE, "--modern-only", refusal))
        return self._urls[refusal]


@pytest.fixture(scope="module")
async def modern_only() -> AsyncIterator[ModernOnly]:
    async with AsyncExitStack() as stack:
        yield ModernOnly(stack)


async def sample(server: str, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(text="ok"), model="test")


@pytest.mark.parametrize("refusal", ["refuse", "answer"])
async def test_a_session_that_answers_requests_reaches_a_server_that_refuses_the_handshake(
    refusal: str, modern_only: ModernOnly
) -> None:
    options = SessionOptions(callbacks=ClientCallbacks(sampling=sample))
    config = HttpServer(url=await modern_only.url(refusal)).with_name("modern")
    async with McpSession(config, options=options) as session:
        assert session.state is SessionState.READY, session.status().error
        assert session.protocol_version == "2026-07-28"
        result = await session.call_tool("test_input_required_result_sampling", {})
    assert not result.is_error, result.text_content()


@pytest.mark.parametrize("refusal", ["refuse", "answer"])
async def test_a_session_that_prefers_the_handshake_era_reconnects_when_the_server_refuses_it(
    refusal: str, modern_only: ModernOnly
) -> None:
    # A stdio server's config (which prefers the handshake era), reached over the fixture's HTTP refusal.
    options = SessionOptions(callbacks=ClientCallbacks(sampling=sample))
    endpoint = resolve_endpoint(HttpServer(url=await modern_only.url(refusal)).with_name("modern"))
    config = stdio_server("modern", "conformance.py")
    async with McpSession(config, options=replace(options, transports={"modern": transport_for(endpoint)})) as s:
        assert s.state is SessionState.READY, s.status().error
        assert s.protocol_version == "2026-07-28"
        result = await s.call_tool("test_input_required_result_sampling", {})
    assert not result.is_error, result.text_content()


async def test_a_session_pinned_to_the_handshake_era_is_refused_by_such_a_server(modern_only: ModernOnly) -> None:
    options = SessionOptions(callbacks=ClientCallbacks(sampling=sample))
    config = HttpServer(url=await modern_only.url("refuse"), protocol="legacy").with_name("modern")
    async with McpSession(config, options=options) as session:
        assert session.state is SessionState.ERROR
        assert "-32020" in (session.status().error or "")
