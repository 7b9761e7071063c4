"""McpToolWrapper: an MCP tool as a registry tool named server__tool, its metadata kept."""

from __future__ import annotations

import logging

import mcp.types as types
import pytest
from mcp_helpers import example_server, in_memory, stdio_server

from toolsift import InvalidToolName
from toolsift.mcp_sessions import McpSession, register_mcp_tools
from toolsift.mcp_sessions._wrapper import McpToolWrapper, build_wrappers, tool_spec
from toolsift.registry import Level, ToolRegistry

ANNOTATED = types.Tool(
    name="read_file",
    title="Read a file",
    description="Read one file.",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    output_schema={"type": "object", "properties": {"text": {"type": "string"}}},
    annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False),
    _meta={"vendor": "x"},
)


def test_wrapper_spec_keeps_the_tools_metadata() -> None:
    config = stdio_server("fs", "general.py")
    spec = tool_spec(config, ANNOTATED)
    assert spec.name == "fs__read_file" and spec.remote_name == "read_file"
    assert spec.server == "fs" and spec.source == "mcp"
    assert spec.description == "Read one file." and spec.title == "Read a file"
    assert spec.input_schema == ANNOTATED.input_schema and spec.output_schema == ANNOTATED.output_schema
    assert spec.annotations == ANNOTATED.annotations
    assert spec.read_only and spec.required_level is Level.READ
    assert spec.meta == {"mcp": {"vendor": "x"}}


def test_wrapper_spec_of_a_tool_without_annotations_requires_write() -> None:
    bare = types.Tool(
        name="rm", input_schema={"type": "object"}, annotations=types.ToolAnnotations(title="Remove things")
    )
    spec = tool_spec(stdio_server("fs", "general.py", tool_prefix="files"), bare)
    assert spec.name == "files__rm" and spec.server == "fs"
    assert not spec.read_only and spec.required_level is Level.WRITE
    assert spec.title == "Remove things" and spec.description == ""


def test_wrapper_spec_refuses_a_name_that_breaks_the_rules() -> None:
    with pytest.raises(InvalidToolName, match="Invalid tool name 'fs__has space'"):
        tool_spec(stdio_server("fs", "general.py"), types.Tool(name="has space", input_schema={"type": "object"}))


def test_wrapper_include_and_exclude_match_the_servers_own_names(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    names = ["get_image", "get_audio", "get_link", "echo", "echo", "bad name"]
    tools = [types.Tool(name=n, input_schema={"type": "object"}) for n in names]
    session = McpSession(
        stdio_server("g", "general.py", include_tools=("get_*", "echo", "bad*"), exclude_tools=("get_a*",))
    )
    wrappers = build_wrappers(session, tools)
    assert [w.spec.name for w in wrappers] == ["g__get_image", "g__get_link", "g__echo"]
    assert all(isinstance(w, McpToolWrapper) and w.session is session for w in wrappers)
    assert repr(wrappers[0]) == "McpToolWrapper('g__get_image')"
    assert "MCP server 'g' lists tool 'echo' twice; keeping the first" in caplog.text
    assert "MCP server 'g': skipping tool 'bad name'" in caplog.text


async def test_wrapper_results_keep_structured_content_through_the_registry() -> None:
    registry = ToolRegistry()
    async with register_mcp_tools(
        [stdio_server("g", "general.py", internal_only=False, exclude_tools=("slow", "progress"))],
        registry,
        options=in_memory({"g": example_server("general.py")}),
    ) as sessions:
        assert "g__slow" not in registry and len(sessions["g"].tools) == 11
        result = await registry.execute("g__add", {"a": 20, "b": 22})
        image = await registry.execute("g__get_image", {})
    assert result.structured_content == {"result": 42} and "\n42\n" in result.text_content()
    assert isinstance(image.content[0], types.ImageContent)
