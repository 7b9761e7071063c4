"""ToolSpec, ToolResult and FunctionTool."""

from __future__ import annotations

import mcp.types as mcp_types
import pytest
from pydantic import BaseModel

from toolsift import InvalidToolName
from toolsift.registry import Level, ToolContext, ToolRegistry, ToolResult, ToolSpec, tool
from toolsift.registry._internal import FunctionTool


@tool(read_only=True)
async def word_count(text: str, minimum: int = 0) -> int:
    """Count the words in a text."""
    return max(minimum, len(text.split()))


class Point(BaseModel):
    x: int
    y: int


def test_function_tool_derives_its_schema_from_the_signature() -> None:
    spec = word_count.spec
    assert spec.name == "word_count" and spec.description == "Count the words in a text."
    assert spec.input_schema["required"] == ["text"]
    assert spec.input_schema["properties"]["minimum"]["default"] == 0
    assert spec.read_only and spec.required_level is Level.READ and spec.source == "function"
    assert spec.annotations is not None and spec.annotations.read_only_hint is True
    assert "title" not in spec.input_schema


async def test_function_tool_runs_async_functions() -> None:
    result = await word_count.call({"text": "a b c"}, ToolContext(call_id="1"))
    assert result.text_content() == "3" and result.structured_content == {"result": 3}


async def test_function_tool_runs_sync_functions_in_a_thread() -> None:
    def shout(text: str) -> str:
        return text.upper()

    result = await FunctionTool(shout, description="Shout.").call({"text": "hi"}, ToolContext(call_id="1"))
    assert result.text_content() == "HI"


async def test_function_tool_passes_the_context_parameter() -> None:
    @tool(name="whoami", required_level="admin", required_permissions={"ops"})
    def whoami(ctx: ToolContext) -> dict[str, str]:
        return {"call": ctx.call_id}

    assert whoami.spec.input_schema["properties"] == {}
    assert whoami.spec.required_level is Level.ADMIN and whoami.spec.required_permissions == {"ops"}
    result = await whoami.call({}, ToolContext(call_id="abc"))
    assert result.structured_content == {"call": "abc"}
    assert repr(whoami) == "FunctionTool('whoami')"


async def test_function_tool_reports_invalid_arguments_as_an_error_result() -> None:
    result = await word_count.call({"text": 3}, ToolContext(call_id="1"))
    assert result.is_error and "text: Input should be a valid string" in result.text_content()


def test_function_tool_refuses_var_arguments() -> None:
    def anything(*args: int) -> None:
        return None

    with pytest.raises(TypeError, match="'anything': \\*args and \\*\\*kwargs cannot be described"):
        FunctionTool(anything)


def test_function_tool_refuses_invalid_names() -> None:
    def ok() -> None:
        return None

    with pytest.raises(InvalidToolName, match="'a b'"):
        FunctionTool(ok, name="a b")


async def test_function_tool_through_the_registry_validates_against_the_schema() -> None:
    registry = ToolRegistry()
    registry.register(word_count)
    result = await registry.execute("word_count", {"text": "one two"})
    assert result.text_content() == "2"


@pytest.mark.parametrize(
    ("value", "text", "structured"),
    [
        ("hi", "hi", None),
        ({"a": 1}, '{"a": 1}', {"a": 1}),
        ([1, 2], "[1, 2]", {"result": [1, 2]}),
        (Point(x=1, y=2), '{"x": 1, "y": 2}', {"x": 1, "y": 2}),
    ],
)
def test_result_from_value(value: object, text: str, structured: object) -> None:
    result = ToolResult.from_value(value)
    assert result.text_content() == text and result.structured_content == structured


def test_result_from_value_passes_content_and_results_through() -> None:
    image = mcp_types.ImageContent(data="aGk=", mime_type="image/png")
    assert ToolResult.from_value(image).content == [image]
    same = ToolResult.text("x")
    assert ToolResult.from_value(same) is same
    assert ToolResult.from_value(None).content == []


def test_result_round_trips_through_mcp() -> None:
    mcp_result = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(text="a"), mcp_types.AudioContent(data="aGk=", mime_type="audio/wav")],
        structured_content={"k": 1},
        is_error=True,
    )
    result = ToolResult.from_mcp(mcp_result)
    assert result.is_error and result.structured_content == {"k": 1} and len(result.content) == 2
    back = result.to_mcp()
    assert back.content == mcp_result.content and back.is_error


def test_error_result_helper() -> None:
    result = ToolResult.error("nope")
    assert result.is_error and result.text_content() == "nope"


def test_spec_destructive_follows_mcp_defaults() -> None:
    assert ToolSpec(name="a").destructive is True
    assert ToolSpec(name="a", read_only=True).destructive is False
    hint = mcp_types.ToolAnnotations(destructive_hint=False)
    assert ToolSpec(name="a", annotations=hint).destructive is False
