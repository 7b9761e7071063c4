"""McpSession against real servers: connect, list, call, every content type, progress, env, roots, sampling."""

from __future__ import annotations

import base64
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp_helpers import example_server, in_memory, local_server, local_server_object, stdio_server
from reload_helpers import Gate
from servers import example_module, http_server
from waits import poll_until

from toolsift import ServerUnavailable
from toolsift.config import HttpServer
from toolsift.mcp_sessions import ClientCallbacks, McpSession, SessionOptions
from toolsift.mcp_sessions._internal import SessionState
from toolsift.registry import ToolResult

MODES = ["auto", "legacy", "2026-07-28"]


def text(result: ToolResult, index: int = 0) -> str:
    block = result.content[index]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize(
    ("mode", "version", "child"),
    [("auto", "2026-07-28", True), ("legacy", "2025-11-25", False), ("2026-07-28", "2026-07-28", False)],
)
async def test_session_connects_lists_and_calls_in_both_eras(mode: str, version: str, child: bool) -> None:
    # Over a real stdio child once; the other eras in this process (what they exchange is the same).
    options = SessionOptions() if child else in_memory({"general": example_server("general.py")})
    async with McpSession(stdio_server("general", "general.py", protocol=mode), options=options) as session:
        assert session.state is SessionState.READY
        assert session.protocol_version == version
        catalog = session.catalog
        assert len(catalog.tools) == 13
        assert {str(r.uri) for r in catalog.resources} == {"docs://readme", "docs://changelog"}
        assert [t.uri_template for t in catalog.resource_templates] == ["greeting://{name}"]
        assert {p.name for p in catalog.prompts} == {"review", "summarize"}
        assert {w.spec.name for w in session.tools} >= {"general__echo", "general__add"}
        result = await session.call_tool("add", {"a": 2, "b": 3})
        assert not result.is_error
        assert text(result) == "5" and result.structured_content == {"result": 5}
        resource = (await session.read_resource("greeting://ada")).contents[0]
        assert isinstance(resource, types.TextResourceContents) and resource.text == "Hello, ada!"
        prompt = await session.get_prompt("review", {"code": "x = 1"})
        assert "x = 1" in str(prompt.messages[0].content)
    assert session.state is SessionState.CLOSED


async def test_session_keeps_every_content_type() -> None:
    options = in_memory({"general": example_server("general.py")})
    async with McpSession(stdio_server("general", "general.py"), options=options) as session:
        image = (await session.call_tool("get_image")).content[0]
        assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
        audio = (await session.call_tool("get_audio")).content[0]
        assert isinstance(audio, types.AudioContent) and audio.mime_type == "audio/wav"
        embedded = (await session.call_tool("get_resource")).content[0]
        assert isinstance(embedded, types.EmbeddedResource)
        assert isinstance(embedded.resource, types.TextResourceContents) and "general" in embedded.resource.text
        blob = (await session.call_tool("get_blob_resource")).content[0]
        assert isinstance(blob, types.EmbeddedResource) and isinstance(blob.resource, types.BlobResourceContents)
        assert base64.b64decode(blob.resource.blob) == bytes(range(16))
        link = (await session.call_tool("get_link")).content[0]
        assert isinstance(link, types.ResourceLink) and str(link.uri) == "docs://changelog"


@pytest.mark.parametrize("mode", MODES)
async def test_session_passes_progress_to_the_caller(mode: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    options = in_memory({"general": example_server("general.py")})
    async with McpSession(stdio_server("general", "general.py", protocol=mode), options=options) as session:
        result = await session.call_tool("progress", {"steps": 3}, progress=progress)
    assert text(result) == "done 3 steps"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_session_lists_every_page_of_tools() -> None:
    options = in_memory({"flow": example_module("flow.py").build_server(page_size=7)})
    async with McpSession(stdio_server("flow", "flow.py", "--page-size", "7"), options=options) as session:
        names = [tool.name for tool in session.catalog.tools]
    assert len(names) == len(set(names)) > 200


async def test_session_runs_concurrent_calls_from_many_tasks(tmp_path: Path) -> None:
    gate, calls = Gate(tmp_path), 20
    results: list[ToolResult] = []
    running: set[int] = set()
    all_running = anyio.Event()
    options = in_memory({"general": example_server("general.py")})
    async with McpSession(stdio_server("general", "general.py"), options=options) as session:
        peak = 0

        async def one(i: int) -> None:
            async def started(done: float, total: float | None, message: str | None) -> None:
                nonlocal peak
                running.add(i)
                peak = max(peak, session.in_flight)
                if len(running) == calls:
                    all_running.set()

            results.append(await session.call_tool("wait_for_file", gate.arguments, progress=started))

        async with anyio.create_task_group() as group:
            for i in range(calls):
                group.start_soon(one, i)
            # No call can end before the gate opens: all of them run on the server at once.
            await all_running.wait()
            gate.open("open")  # at once, by rename: a call never reads the gate half written
        assert session.in_flight == 0
    assert peak == calls
    assert len(results) == calls and all(r.text_content() == "open" for r in results)


async def test_session_child_gets_a_minimal_environment_plus_its_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIFT_PARENT_ONLY", "parent-value")
    monkeypatch.setenv("TOOLSIFT_TEST_GREETING", "hello from the parent")
    config = stdio_server("general", "general.py", env={"GREETING": "${TOOLSIFT_TEST_GREETING}", "PLAIN": "1"})
    async with McpSession(config) as session:
        assert text(await session.call_tool("env_get", {"name": "TOOLSIFT_PARENT_ONLY"})) == "<unset>"
        # Resolved values count as secrets: masked where the server echoes them, which shows it got them whole.
        assert text(await session.call_tool("env_get", {"name": "GREETING"})) == "[redacted]"
        assert text(await session.call_tool("env_get", {"name": "PLAIN"})) == "1"
        assert text(await session.call_tool("env_get", {"name": "PATH"})) != "<unset>"


async def test_session_never_shows_secrets_in_logs_reprs_or_stderr(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("TOOLSIFT_TEST_TOKEN", secret)
    caplog.set_level(logging.DEBUG)
    config = stdio_server("general", "general.py", env={"API_TOKEN": "secret://env/TOOLSIFT_TEST_TOKEN"})
    async with McpSession(config) as session:
        # The server sees the real value (masked when it echoes it back)...
        assert text(await session.call_tool("env_get", {"name": "API_TOKEN"})) == "[redacted]"
        # ...and when it prints it, toolsift keeps and logs it masked.
        await session.call_tool("log_stderr", {"text": f"my token is {secret}"})
        await poll_until(lambda: any("my token is" in line for line in session.stderr_tail()))
        shown = [repr(session), repr(config), str(session.status()), *session.stderr_tail()]
    assert "my token is [redacted]" in session.stderr_tail()
    assert all(secret not in item for item in shown)
    assert secret not in caplog.text
    assert "my token is [redacted]" in caplog.text


async def test_session_with_an_unresolvable_secret_fails_naming_the_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TOOLSIFT_TEST_MISSING", raising=False)
    config = stdio_server("general", "general.py", env={"API_TOKEN": "secret://env/TOOLSIFT_TEST_MISSING"})
    async with McpSession(config) as session:
        assert session.state is SessionState.ERROR
        assert session.reason is not None
        assert "TOOLSIFT_TEST_MISSING" in session.reason and "env.API_TOKEN" in session.reason
        with pytest.raises(ServerUnavailable, match=r"'general' is down: could not start: .*TOOLSIFT_TEST_MISSING"):
            await session.call_tool("echo", {"text": "x"})


async def test_session_keeps_only_the_last_stderr_lines() -> None:
    async with McpSession(stdio_server("general", "general.py"), options=SessionOptions(stderr_lines=3)) as session:
        for i in range(6):
            await session.call_tool("log_stderr", {"text": f"line {i}"})
        await poll_until(lambda: session.stderr_tail(1) == ["line 5"])  # stderr is a pipe read by another task
        assert session.stderr_tail() == ["line 3", "line 4", "line 5"]


@pytest.mark.parametrize("mode", MODES)
async def test_session_offers_the_workspace_as_the_only_root(mode: str, tmp_path: Path) -> None:
    options = in_memory({"local": local_server_object("session_server.py")}, SessionOptions(workspace=tmp_path))
    async with McpSession(local_server("local", "session_server.py", protocol=mode), options=options) as session:
        result = await session.call_tool("roots")
    assert text(result) == f"{tmp_path.resolve().as_uri()} {tmp_path.name}"


async def test_session_refuses_sampling_and_roots_unless_configured() -> None:
    options = in_memory({"local": local_server_object("session_server.py")})
    async with McpSession(local_server("local", "session_server.py"), options=options) as session:
        sampled = await session.call_tool("ask", {"question": "2+2?"})
        roots = await session.call_tool("roots")
    assert sampled.is_error and "failed tool 'ask' with JSON-RPC error" in text(sampled)
    assert "sampling capability" in text(sampled, 1)
    assert roots.is_error and "roots capability" in text(roots, 1)


@pytest.mark.parametrize("mode", MODES)
async def test_session_uses_the_application_sampling_callback(mode: str) -> None:
    asked: list[str] = []

    async def sample(server: str, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append(f"{server}: {params.messages[0].content}")
        return types.CreateMessageResult(role="assistant", content=types.TextContent(text="four"), model="stub")

    options = in_memory(
        {"local": local_server_object("session_server.py")}, SessionOptions(callbacks=ClientCallbacks(sampling=sample))
    )
    async with McpSession(local_server("local", "session_server.py", protocol=mode), options=options) as session:
        result = await session.call_tool("ask", {"question": "2+2?"})
    assert text(result) == "four"
    assert len(asked) == 1 and asked[0].startswith("local: ") and "2+2?" in asked[0]


@pytest.fixture(scope="module")
async def notes_url() -> AsyncIterator[str]:
    """One ``notes_http.py`` child for the eras' HTTP tests; each leaves the notes as it found them."""
    async with http_server("notes_http.py") as url:
        yield url


@pytest.mark.parametrize("mode", MODES)
async def test_session_speaks_streamable_http(mode: str, notes_url: str) -> None:
    config = HttpServer(url=notes_url, protocol=mode, headers={"X-Test": "1"}).with_name("notes")
    async with McpSession(config) as session:
        assert session.status().transport == "http"
        assert not (await session.call_tool("note_add", {"title": "t", "body": "b"})).is_error
        listed = await session.call_tool("note_list")
        assert not (await session.call_tool("note_delete", {"title": "t"})).is_error
    assert listed.structured_content == {"result": ["t"]}


async def test_session_speaks_legacy_sse() -> None:
    async with http_server("../../tests/sse_server.py") as url:
        config = HttpServer(url=url.removesuffix("/mcp") + "/sse", type="sse").with_name("general")
        async with McpSession(config) as session:
            assert session.status().transport == "sse"
            assert text(await session.call_tool("echo", {"text": "over sse"})) == "over sse"


async def test_session_that_is_not_running_refuses_calls() -> None:
    session = McpSession(stdio_server("general", "general.py"))
    assert session.state is SessionState.IDLE
    with pytest.raises(ServerUnavailable, match="'general' is idle"):
        await session.call_tool("echo", {"text": "x"})
    with pytest.raises(RuntimeError, match="is not running"):
        await session.ensure_started()
    await session.close()
    assert session.state is SessionState.CLOSED
    with pytest.raises(RuntimeError, match="Cannot run MCP session 'general' twice"):
        await session.run()
