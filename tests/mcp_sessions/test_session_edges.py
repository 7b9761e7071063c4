"""Session edge cases: odd listings, bad results, list changes of every kind, the stderr pipe, reprs."""

from __future__ import annotations

import logging

import anyio
import anyio.to_thread
import httpx2
import pytest
from mcp.client.auth.exceptions import OAuthTokenError
from mcp_helpers import FAST, local_server, stdio_server, wait_for
from waits import poll_until

from toolsift import ServerUnavailable
from toolsift._redaction import Redactor
from toolsift.config import HttpServer, StdioServer
from toolsift.mcp_sessions import McpSession, McpSessionGroup
from toolsift.mcp_sessions._catalog import _paginate
from toolsift.mcp_sessions._endpoint import resolve_endpoint
from toolsift.mcp_sessions._failures import describe_exception, timeout_result
from toolsift.mcp_sessions._internal import SessionState
from toolsift.mcp_sessions._stderr import StderrBuffer


class Page:
    def __init__(self, items: list[int], next_cursor: str | None) -> None:
        self.items, self.next_cursor = items, next_cursor


async def test_catalog_stops_on_a_repeated_cursor(caplog: pytest.LogCaptureFixture) -> None:
    async def fetch(cursor: str | None) -> Page:
        return Page([1], "same")

    assert await _paginate("srv", "tools", fetch, lambda page: page.items) == [1, 1]
    assert "MCP server 'srv' repeated the tools cursor 'same'; keeping the 2 items listed so far" in caplog.text


async def test_catalog_stops_after_too_many_pages(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("toolsift.mcp_sessions._catalog._MAX_PAGES", 3)

    async def fetch(cursor: str | None) -> Page:
        return Page([0], str(int(cursor or 0) + 1))

    assert await _paginate("srv", "prompts", fetch, lambda page: page.items) == [0, 0, 0]
    assert "returned more than 3 pages of prompts; keeping the first 3 items" in caplog.text


async def test_session_server_without_tools_capability_offers_none() -> None:
    async with McpSession(local_server("raw", "raw_server.py", "--no-tools", protocol="legacy")) as session:
        assert session.state is SessionState.READY
        assert session.catalog.tools == () and len(session.catalog.resources) == 1


async def test_session_tools_list_not_implemented_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    config = local_server("raw", "raw_server.py", "--tools-list-error", "-32601", protocol="legacy")
    async with McpSession(config) as session:
        assert session.state is SessionState.READY and session.catalog.tools == ()
    assert "'raw' advertises tools but does not implement tools/list (tools are broken)" in caplog.text


async def test_session_failing_tools_list_means_it_cannot_start() -> None:
    config = local_server("raw", "raw_server.py", "--tools-list-error", "-32603", protocol="legacy")
    async with McpSession(config) as session:
        assert session.state is SessionState.ERROR
        assert session.reason == "could not start: JSON-RPC error -32603: tools are broken"


async def test_session_result_breaking_its_output_schema_is_a_clear_error() -> None:
    async with McpSession(local_server("raw", "raw_server.py", "--bad-output", protocol="legacy")) as session:
        result = await session.call_tool("typed")
    assert result.is_error and result.meta["mcp_failure"] == "invalid_result"
    assert result.text_content().startswith(
        "MCP server 'raw' returned an answer to tool 'typed' that could not be used: RuntimeError\n"
        "Invalid structured content returned by tool typed"
    )


async def test_session_relists_tools_resources_and_prompts_when_told() -> None:
    async with McpSession(local_server("raw", "raw_server.py", protocol="legacy")) as session:
        kinds: list[str] = []
        session.subscribe(lambda event: kinds.append(event.kind))
        before = session.catalog
        assert (await session.call_tool("announce")).text_content() == "announced"
        await poll_until(lambda: session.catalog is not before)  # relisted in the session's own task
        assert session.catalog.resources == before.resources and session.catalog.prompts == before.prompts
        assert "tools" not in kinds  # listed again, found unchanged: nothing to swap or announce


async def test_session_calls_while_first_connecting_fail_fast() -> None:
    config = local_server("slow", "raw_server.py", "--init-delay", "5", protocol="legacy")
    async with McpSessionGroup(options=FAST) as group:
        session = group.spawn(config)
        assert session is not None
        await wait_for(session, lambda s: s.state is SessionState.CONNECTING)
        with pytest.raises(ServerUnavailable, match="'slow' is connecting"):
            await session.call_tool("ping")
        started = anyio.current_time()
    # Closing did not wait for the handshake the server was sitting on.
    assert anyio.current_time() - started < 4 and session.state is SessionState.CLOSED


async def test_session_closed_before_it_ran_and_drained_after_close_do_nothing() -> None:
    session = McpSession(stdio_server("general", "general.py"))
    await session.close()
    await session.drain(0)
    assert session.state is SessionState.CLOSED
    assert repr(session) == "McpSession('general', state='closed', tools=0)"


async def test_session_enter_fails_cleanly_when_cancelled() -> None:
    session = McpSession(local_server("slow", "raw_server.py", "--init-delay", "5", protocol="legacy"))
    with anyio.move_on_after(0.3) as scope:
        async with session:
            pytest.fail("entered a session whose server never answered")
    assert scope.cancelled_caught and session.state is SessionState.CLOSED


async def test_group_rejects_double_entry_and_unknown_retire() -> None:
    group = McpSessionGroup()
    async with group:
        with pytest.raises(RuntimeError, match="already entered"):
            await group.__aenter__()
        with pytest.raises(KeyError):
            group.retire("nobody")
        assert repr(group) == "McpSessionGroup()" and group.status() == []


def test_endpoint_collects_every_resolved_value_for_masking(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIFT_TEST_ARG", "argument-secret")
    monkeypatch.setenv("TOOLSIFT_TEST_BIN", "/usr/bin/env")
    config = StdioServer(
        command="${TOOLSIFT_TEST_BIN}",
        args=("--token", "${TOOLSIFT_TEST_ARG}"),
        env={"KEY": "value-secret"},
        cwd="${TOOLSIFT_TEST_BIN:-/tmp}",
    ).with_name("s")
    endpoint = resolve_endpoint(config)
    assert set(endpoint.secrets) >= {"argument-secret", "value-secret", "/usr/bin/env"}
    assert endpoint.env["KEY"] == "value-secret" and "PATH" in endpoint.env
    assert "secret" not in repr(endpoint)
    headers = {"Authorization": "Bearer tok-123456"}
    http = resolve_endpoint(HttpServer(url="http://127.0.0.1:9/mcp", headers=headers).with_name("h"))
    assert not hasattr(http, "env") and Redactor(http.secrets)("sent tok-123456") == "sent [redacted]"


def test_redactor_masks_values_and_their_words_but_not_short_ones() -> None:
    redact = Redactor(["Bearer tok-123456", "1"])
    assert redact("auth Bearer tok-123456 and tok-123456 and 1") == "auth [redacted] and [redacted] and 1"
    assert Redactor()("nothing to hide") == "nothing to hide"


def test_describe_exception_names_the_cause() -> None:
    def describe(exc: BaseException) -> str:
        return describe_exception(exc, server=None, redact=str)

    assert describe(ExceptionGroup("outer", [ExceptionGroup("inner", [OSError("boom")])])) == "OSError: boom"
    assert describe(FileNotFoundError("x")) == "FileNotFoundError: x"
    assert describe(ValueError()) == "ValueError"
    assert describe(OAuthTokenError("exchange failed (401)")) == "OAuth sign-in failed: exchange failed (401)"
    assert timeout_result("s", "t", None).text_content() == (
        "Tool 't' of MCP server 's' did not answer; the server was told to cancel it."
    )


def test_describe_exception_names_what_the_servers_transport_could_not_reach() -> None:
    stdio, http = StdioServer(command="no-such-program"), HttpServer(url="https://h.example/mcp")
    missing, refused = FileNotFoundError("x"), httpx2.ConnectError("refused")
    assert describe_exception(missing, server=stdio, redact=str) == "command 'no-such-program' was not found"
    assert (
        describe_exception(refused, server=http, redact=str)
        == "cannot reach 'https://h.example/mcp': ConnectError: refused"
    )
    # A cause that does not belong to the server's transport is described as it is.
    assert describe_exception(missing, server=http, redact=str) == "FileNotFoundError: x"


async def test_stderr_pipe_keeps_partial_and_overlong_lines(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="toolsift.mcp_sessions.stderr")
    buffer = StderrBuffer("srv", 10, str)
    pipe = buffer.open_pipe()

    def write() -> None:
        # More than a pipe holds: it must be written while the pump reads.
        pipe.writer.write("first\n" + "x" * 70000 + "\nlast without newline")
        pipe.writer.flush()
        pipe.close_writer()

    async with anyio.create_task_group() as group:
        group.start_soon(pipe.pump)
        await anyio.to_thread.run_sync(write)
    lines = buffer.tail(5)
    assert lines[0] == "first" and lines[-1] == "last without newline"
    assert all(len(line) <= 2100 for line in lines) and "[srv] first" in caplog.text
    assert buffer.tail(0) == []
