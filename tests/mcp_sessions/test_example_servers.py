"""The example MCP servers of examples/servers/, exercised with the SDK's Client.

These tests document what each server does, so that the session layer can be
tested against them knowing what to expect. What a server answers is checked
in this process, over memory streams; what depends on the process or the
transport (crashes, stdio framing, the environment, delays, HTTP) over real
stdio and HTTP.
"""

from __future__ import annotations

import base64
import io
import json
import re
import sys
import time
import wave
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from jsonschema import Draft202012Validator
from mcp import Client, MCPError
from mcp.client.session import IncomingMessage
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from mcp_helpers import example_server, faulty
from reload_helpers import write_text
from servers import EXAMPLES, example_module, http_server, stdio_params, stop_process, wait_for_file

MODES = ["auto", "legacy"]
Target = Any  # StdioServerParameters or an HTTP URL, as Client accepts them


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


# --- general.py -------------------------------------------------------------------------------------------------

GENERAL_TOOLS = {
    "echo",
    "add",
    "get_image",
    "get_audio",
    "get_resource",
    "get_blob_resource",
    "get_link",
    "slow",
    "wait_for_file",
    "progress",
    "fail",
    "env_get",
    "log_stderr",
}


@pytest.mark.parametrize("mode", MODES)
async def test_general_lists_tools_resources_and_prompts(mode: str) -> None:
    async with Client(example_server("general.py"), mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == GENERAL_TOOLS
        read_only = {name for name, tool in tools.items() if tool.annotations and tool.annotations.read_only_hint}
        assert read_only == GENERAL_TOOLS - {"log_stderr"}
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        assert resources == {"docs://readme", "docs://changelog"}
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["greeting://{name}"]
        contents = (await client.read_resource("greeting://bob")).contents[0]
        assert isinstance(contents, types.TextResourceContents) and contents.text == "Hello, bob!"
        assert {p.name for p in (await client.list_prompts()).prompts} == {"review", "summarize"}
        prompt = await client.get_prompt("summarize", {"text": "long story", "style": "bullet"})
        message = prompt.messages[0].content
        assert isinstance(message, types.TextContent) and "bullet style" in message.text


async def test_general_returns_every_content_type_and_error_results() -> None:
    async with Client(example_server("general.py")) as client:
        assert text_of(await client.call_tool("echo", {"text": "hi"})) == "hi"
        assert (await client.call_tool("add", {"a": 2, "b": 40})).structured_content == {"result": 42}

        image = (await client.call_tool("get_image", {})).content[0]
        assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
        assert base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n")

        audio = (await client.call_tool("get_audio", {})).content[0]
        assert isinstance(audio, types.AudioContent) and audio.mime_type == "audio/wav"
        with wave.open(io.BytesIO(base64.b64decode(audio.data))) as wav:
            assert (wav.getframerate(), wav.getnframes()) == (8000, 80)

        embedded = (await client.call_tool("get_resource", {})).content[0]
        assert isinstance(embedded, types.EmbeddedResource)
        assert isinstance(embedded.resource, types.TextResourceContents) and "general" in embedded.resource.text

        blob = (await client.call_tool("get_blob_resource", {})).content[0]
        assert isinstance(blob, types.EmbeddedResource)
        assert isinstance(blob.resource, types.BlobResourceContents)
        assert base64.b64decode(blob.resource.blob) == bytes(range(16))

        link = (await client.call_tool("get_link", {})).content[0]
        assert isinstance(link, types.ResourceLink) and str(link.uri) == "docs://changelog"

        failed = await client.call_tool("fail", {"message": "disk full"})  # an error result, not a protocol error
        assert failed.is_error and text_of(failed) == "Error executing tool fail: disk full"


@pytest.mark.parametrize("mode", MODES)
async def test_general_progress_reports_every_step(mode: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with Client(example_server("general.py"), mode=mode) as client:
        result = await client.call_tool("progress", {"steps": 3}, progress_callback=on_progress)
    assert text_of(result) == "done 3 steps"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.parametrize("mode", MODES)
async def test_general_slow_call_cancellation_reaches_the_server(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In this process, in both eras; test_general_wait_for_file_answers_once_the_file_exists cancels over stdio.
    marker = tmp_path / "cancelled"
    monkeypatch.setenv("TOOLSIFT_CANCEL_MARKER", str(marker))
    async with Client(example_server("general.py"), mode=mode) as client:
        with pytest.raises(MCPError, match="[Tt]imed out"):
            await client.call_tool("slow", {"seconds": 30}, read_timeout_seconds=0.3)
        assert await wait_for_file(marker) == "CANCELLED slow\n"
        assert text_of(await client.call_tool("echo", {"text": "still alive"})) == "still alive"


async def test_general_wait_for_file_answers_once_the_file_exists(tmp_path: Path) -> None:
    release = tmp_path / "release"
    marker = tmp_path / "cancelled"
    async with Client(stdio_params("general.py", env={"TOOLSIFT_CANCEL_MARKER": str(marker)})) as client:
        with pytest.raises(MCPError, match="timed out"):
            await client.call_tool("wait_for_file", {"path": str(release)}, read_timeout_seconds=0.3)
        assert await wait_for_file(marker) == "CANCELLED wait_for_file\n"
        write_text(release, "released")  # at once, by rename: the tool never reads it half written
        answer = await client.call_tool("wait_for_file", {"path": str(release)})
    assert text_of(answer) == "released"


async def test_general_child_sees_only_the_given_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIFT_PARENT_ONLY", "parent secret")
    async with Client(stdio_params("general.py", env={"TOOLSIFT_GIVEN": "given"})) as client:
        assert text_of(await client.call_tool("env_get", {"name": "TOOLSIFT_GIVEN"})) == "given"
        assert text_of(await client.call_tool("env_get", {"name": "TOOLSIFT_PARENT_ONLY"})) == "<unset>"
        assert text_of(await client.call_tool("log_stderr", {"text": "to stderr"})) == "logged"


# --- every server over HTTP -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "tool", "arguments"),
    [
        ("general.py", "echo", {"text": "over http"}),
        ("faulty.py", "echo", {"text": "over http"}),
        ("flow.py", "memory_store", {"key": "k", "value": "over http"}),
        ("notes_http.py", "note_add", {"title": "t", "body": "over http"}),
    ],
)
async def test_servers_list_and_call_over_http_in_both_modes(script: str, tool: str, arguments: dict[str, Any]) -> None:
    async with http_server(script) as url:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", url)
        for mode in MODES:
            async with Client(url, mode=mode) as client:
                assert tool in {t.name for t in (await client.list_tools()).tools}
                assert not (await client.call_tool(tool, arguments)).is_error


async def test_http_server_reports_a_server_that_exits_before_it_is_ready() -> None:
    with pytest.raises(RuntimeError, match=r"flow.py --page-size -1: process exited with code 2(.|\n)*must be 0"):
        async with http_server("flow.py", "--page-size", "-1"):
            pass


async def test_http_server_announces_ready_on_stderr() -> None:
    process = await anyio.open_process([sys.executable, str(EXAMPLES / "notes_http.py"), "--port", "0"])
    try:
        assert process.stderr is not None
        buffer = b""
        while (found := re.search(rb"^READY (\S+)$", buffer, re.MULTILINE)) is None:  # other log lines may come first
            buffer += await process.stderr.receive()
        url = found.group(1).decode()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", url)
        async with Client(url) as client:
            assert len((await client.list_tools()).tools) == 4
    finally:
        await stop_process(process)


# --- notes_http.py ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("flags", [(), ("--stateless",), ("--json-response",)])
async def test_notes_http_adds_lists_gets_and_deletes(flags: tuple[str, ...]) -> None:
    async with http_server("notes_http.py", *flags) as url:
        async with Client(url, mode="legacy") as writer:
            assert text_of(await writer.call_tool("note_add", {"title": "b", "body": "second"})) == "added note 'b'"
            await writer.call_tool("note_add", {"title": "a", "body": "first"})
        async with Client(url) as reader:  # another client, another era: same notes
            assert (await reader.call_tool("note_list", {})).structured_content == {"result": ["a", "b"]}
            assert text_of(await reader.call_tool("note_get", {"title": "a"})) == "first"
            assert text_of(await reader.call_tool("note_delete", {"title": "a"})) == "deleted note 'a'"
            missing = await reader.call_tool("note_get", {"title": "a"})
            assert missing.is_error and "No note titled 'a'" in text_of(missing)


# --- flow.py ----------------------------------------------------------------------------------------------------

FLOW_GROUPS = (
    "memory",
    "swarm",
    "agent",
    "task",
    "coordination",
    "workflow",
    "session",
    "hooks",
    "system",
    "neural",
    "github",
    "performance",
)


@pytest.fixture(scope="module")
async def flow_tools() -> list[types.Tool]:
    async with Client(example_module("flow.py").build_server()) as client:
        return (await client.list_tools()).tools


async def test_flow_lists_over_200_unique_tools_with_valid_schemas(flow_tools: list[types.Tool]) -> None:
    tools = flow_tools
    names = [tool.name for tool in tools]
    assert len(names) >= 200 and len(set(names)) == len(names)
    assert len({tool.description for tool in tools}) == len(tools)
    sizes = []
    for tool in tools:
        Draft202012Validator.check_schema(tool.input_schema)
        assert tool.description and len(tool.description) > 40, tool.name
        sizes.append(len(tool.model_dump_json(by_alias=True, exclude_none=True)))
    assert 300 <= sum(sizes) / len(sizes) <= 900
    hints = {tool.name: tool.annotations or types.ToolAnnotations() for tool in tools}
    assert all(hints[name].destructive_hint for name in ("memory_delete", "swarm_destroy", "agent_terminate"))
    assert all(hints[name].read_only_hint for name in ("memory_search", "swarm_status", "performance_report"))
    assert not any(hint.read_only_hint and hint.destructive_hint for hint in hints.values())
    assert sum("$defs" in tool.input_schema for tool in tools) >= 3
    assert any('"format":"uri"' in tool.model_dump_json() for tool in tools)
    assert set(FLOW_GROUPS) <= {name.split("_")[0] for name in names}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("store a value in memory", "memory_store"),
        ("spawn a new agent", "agent_spawn"),
        ("initialize a swarm with a topology", "swarm_init"),
        ("delete a branch", "github_branch_delete"),
        ("token consumption by model", "token_usage"),
    ],
)
async def test_flow_descriptions_single_out_the_right_tool(
    flow_tools: list[types.Tool], query: str, expected: str
) -> None:
    """A plain word-overlap ranking already finds the intended tool: descriptions are specific."""
    words = set(re.findall(r"[a-z]+", query)) - {"a", "an", "the", "in", "with", "by", "of"}

    def score(tool: types.Tool) -> int:
        return len(words & set(re.findall(r"[a-z]+", f"{tool.name.replace('_', ' ')} {tool.description}".lower())))

    ranked = sorted(flow_tools, key=score, reverse=True)
    assert ranked[0].name == expected and score(ranked[0]) > score(ranked[1])


async def test_flow_pages_tools_list_when_asked() -> None:
    async with Client(example_module("flow.py").build_server(page_size=50)) as client:
        pages, names, cursor = 0, list[str](), None
        while True:
            page = await client.list_tools(cursor=cursor)
            pages, names, cursor = pages + 1, names + [t.name for t in page.tools], page.next_cursor
            if cursor is None:
                break
        with pytest.raises(MCPError, match="Invalid cursor 'x'"):
            await client.list_tools(cursor="x")
    assert pages == 5 and len(names) == len(set(names)) >= 200


@pytest.mark.parametrize("mode", MODES)
async def test_flow_memory_tools_keep_state_and_other_tools_chain_ids(mode: str) -> None:
    async def call(client: Client, name: str, arguments: dict[str, Any]) -> Any:
        result = await client.call_tool(name, arguments)
        assert not result.is_error, text_of(result)
        return json.loads(text_of(result))

    async with Client(example_module("flow.py").build_server(), mode=mode) as client:
        stored = await call(client, "memory_store", {"key": "user:1", "value": {"name": "Ada"}, "tags": ["vip"]})
        assert stored == {"key": "user:1", "namespace": "default", "replaced": False, "stored": True}
        assert (await call(client, "memory_retrieve", {"key": "user:1"}))["value"] == {"name": "Ada"}
        found = await call(client, "memory_search", {"pattern": "user:*", "tags": ["vip"]})
        assert found["results"] == [{"key": "user:1", "value": {"name": "Ada"}}]
        await call(client, "memory_backup", {"name": "before"})
        assert (await call(client, "memory_delete", {"key": "user:1"}))["deleted"] is True
        assert (await call(client, "memory_retrieve", {"key": "user:1"}))["found"] is False
        assert (await call(client, "memory_restore", {"name": "before"}))["restored"] is True
        assert (await call(client, "memory_list", {}))["keys"] == ["user:1"]

        swarm_id = (await call(client, "swarm_init", {"topology": "mesh"}))["swarm_id"]
        status = await call(client, "swarm_status", {"swarm_id": swarm_id})
        assert status == {"arguments": {"swarm_id": swarm_id}, "group": "swarm", "status": "ok", "tool": "swarm_status"}


async def test_flow_rejects_bad_arguments_and_unknown_tools() -> None:
    async with Client(example_module("flow.py").build_server()) as client:
        result = await client.call_tool("swarm_init", {"topology": "cube", "extra": 1})
        assert result.is_error
        assert re.search(r"'extra' was unexpected.*topology: 'cube' is not one of", text_of(result))
        missing = await client.call_tool("memory_store", {"value": 1})
        assert missing.is_error and "'key' is a required property" in text_of(missing)
        with pytest.raises(MCPError, match="Unknown tool: 'no_such_tool'"):
            await client.call_tool("no_such_tool", {})


# --- faulty.py --------------------------------------------------------------------------------------------------


def connection_failure(code: int, match: str) -> pytest.RaisesGroup[MCPError]:
    """What escapes ``async with Client(...)`` when connecting fails: MCPError wrapped in groups."""
    return pytest.RaisesGroup(
        pytest.RaisesExc(MCPError, match=match, check=lambda e: e.code == code), flatten_subgroups=True
    )


async def test_faulty_crash_at_start_fails_the_connection() -> None:
    with connection_failure(-32000, "Connection closed"):
        async with Client(stdio_params("faulty.py", "--crash-at-start")):
            pass


async def test_faulty_hang_times_out_the_handshake() -> None:
    with connection_failure(-32001, "Request 'initialize' timed out"):
        async with Client(stdio_params("faulty.py", "--hang"), mode="legacy", read_timeout_seconds=0.5):
            pass


async def test_faulty_crash_after_n_calls_closes_the_connection() -> None:
    async with Client(stdio_params("faulty.py", "--crash-after", "2"), mode="legacy") as client:
        for _ in range(2):
            await client.call_tool("echo", {"text": "fine"})
        for _ in range(2):  # the crash call, then every later call fails the same way at once
            with pytest.raises(MCPError, match="Connection closed"):
                await client.call_tool("echo", {"text": "too late"})


async def test_faulty_malformed_line_reaches_the_message_handler_and_calls_go_on() -> None:
    errors: list[Exception] = []

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            errors.append(message)

    async with Client(stdio_params("faulty.py", "--malformed-after", "1"), message_handler=on_message) as client:
        assert text_of(await client.call_tool("echo", {"text": "one"})) == "one"
        assert errors == []
        assert text_of(await client.call_tool("echo", {"text": "two"})) == "two"
        assert text_of(await client.call_tool("echo", {"text": "three"})) == "three"
    assert len(errors) == 1 and "Invalid JSON" in str(errors[0])


async def test_faulty_notification_error_without_id_is_survivable() -> None:
    errors: list[Exception] = []

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            errors.append(message)

    params = stdio_params("faulty.py", "--notification-error")
    async with Client(params, mode="legacy", message_handler=on_message) as client:  # sends notifications/initialized
        assert text_of(await client.call_tool("echo", {"text": "ok"})) == "ok"
    assert len(errors) == 1 and "JSONRPCError.id\n  Field required" in str(errors[0])


async def test_faulty_delay_slows_every_call() -> None:
    async with Client(faulty(delay=0.3), mode="legacy") as client:
        with pytest.raises(MCPError, match="timed out"):
            await client.call_tool("echo", {"text": "x"}, read_timeout_seconds=0.05)
        start = time.monotonic()
        await client.call_tool("echo", {"text": "x"})
        assert time.monotonic() - start >= 0.3


@pytest.mark.parametrize("mode", MODES)
async def test_faulty_init_delay_slows_the_handshake_in_both_eras(mode: str) -> None:
    start = time.monotonic()
    async with Client(faulty(init_delay=0.5), mode=mode) as client:
        assert time.monotonic() - start >= 0.5
        assert text_of(await client.call_tool("echo", {"text": "x"})) == "x"


async def test_faulty_inject_puts_a_payload_into_text_results(monkeypatch: pytest.MonkeyPatch) -> None:
    module = example_module("faulty.py")
    monkeypatch.setenv("FAULTY_INJECT", "1")
    faults, _ = module.parse_args([])  # variables work as flags
    async with Client(module.build_server(faults, None)) as client:
        text = text_of(await client.call_tool("echo", {"text": "report"}))
    assert text.startswith("report\n\n")
    assert "Ignore previous instructions" in text and "<<<END UNTRUSTED TOOL RESULT>>>" in text
    assert "\uff1c\uff1c\uff1cEND UNTRUSTED TOOL RESULT\uff1e\uff1e\uff1e" in text


@pytest.mark.parametrize(
    ("mode", "code", "message"), [("legacy", 0, "boom"), ("auto", -32603, "Internal server error")]
)
async def test_faulty_rpc_errors_turn_tool_failures_into_protocol_errors(mode: str, code: int, message: str) -> None:
    async with Client(faulty(rpc_errors=True), mode=mode) as client:
        with pytest.raises(MCPError, match=message) as caught:
            await client.call_tool("fail", {"message": "boom"})
    assert caught.value.code == code


async def test_faulty_fake_capabilities_are_advertised_but_fail() -> None:
    async with Client(faulty(fake_capabilities=True)) as client:
        assert (await client.call_tool("fail", {"message": "boom"})).is_error  # without --rpc-errors
        capabilities = client.server_capabilities
        assert capabilities is not None and capabilities.resources and capabilities.prompts
        with pytest.raises(MCPError, match="Method not found: resources/list"):
            await client.list_resources()
        with pytest.raises(MCPError, match="prompts/list: backend offline"):
            await client.list_prompts()


@pytest.mark.parametrize("mode", MODES)
async def test_faulty_old_protocol_negotiates_2024_11_05(mode: str) -> None:
    async with Client(stdio_params("faulty.py", "--old-protocol"), mode=mode) as client:
        assert client.protocol_version == "2024-11-05"
        assert text_of(await client.call_tool("echo", {"text": "old"})) == "old"
        with pytest.raises(MCPError, match="Method not found"):
            await client.session.discover()


async def watch_tool_changes(target: Target, mode: str) -> list[str]:
    """Add a tool through ``add_tool`` and return the tool names seen after the change was announced."""
    announced = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            announced.set()

    async with Client(target, mode=mode, message_handler=on_message) as client:
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            async with client.listen(tools_list_changed=True) as events:
                await client.call_tool("add_tool", {"name": "late_tool"})
                async for _ in events:
                    break
        else:
            await client.call_tool("add_tool", {"name": "late_tool"})
            await announced.wait()
        names = [tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools]
        assert "late_tool" in text_of(await client.call_tool("late_tool", {"x": 1}))
        await client.call_tool("remove_tool", {"name": "late_tool"})
        assert "late_tool" not in {tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools}
    return names


@pytest.mark.parametrize("mode", MODES)
async def test_faulty_add_tool_announces_the_change_over_stdio(mode: str) -> None:
    assert "late_tool" in await watch_tool_changes(stdio_params("faulty.py"), mode)


async def test_faulty_add_tool_announces_the_change_over_http() -> None:
    async with http_server("faulty.py") as url:
        for mode in MODES:
            assert "late_tool" in await watch_tool_changes(url, mode)


async def test_faulty_refuses_stdio_faults_over_http() -> None:
    result = await anyio.run_process([sys.executable, str(EXAMPLES / "faulty.py"), "--http", "--hang"], check=False)
    assert result.returncode == 2
    assert "--hang is a stdio fault and cannot be combined with --http" in result.stderr.decode()
