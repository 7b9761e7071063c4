"""Tool declarations in their smallest equivalent form: what the model is sent, never what is validated."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_values import json_values
from jsonschema import Draft202012Validator
from local_tools import RecordingTool
from pydantic import BaseModel, Field
from tool_schemas import example_schemas

from toolsift.agent import Conversation, ToolCall
from toolsift.agent._compact import compact_declaration, compact_schema
from toolsift.registry import ToolRegistry
from toolsift.toolbox import Toolbox

SERVERS = Path(__file__).resolve().parents[2] / "examples" / "servers"


class Address(BaseModel):
    street: str
    city: str = ""


class convert_timeArguments(BaseModel):  # named as FastMCP names a tool's argument model
    source_timezone: str = Field(description="  IANA name, such as Europe/London.  ")
    title: str = Field(default="", title="Heading of the note")
    address: Address | None = None
    mode: str = Field(default="fast", json_schema_extra={"enum": [{"title": "Fast"}, "slow"]})


def test_generated_titles_and_schema_uri_go_and_everything_else_stays() -> None:
    original = convert_timeArguments.model_json_schema() | {"$schema": "https://json-schema.org/draft/2020-12/schema"}
    compact = compact_schema(original, "convert_time")
    assert "$schema" not in compact and "title" not in compact  # the root title is the generated class name
    properties = compact["properties"]
    assert "title" not in properties["source_timezone"]  # "Source Timezone" restates source_timezone
    assert properties["source_timezone"]["description"] == "IANA name, such as Europe/London."
    assert properties["title"]["title"] == "Heading of the note"  # a property called title; a title of its own
    assert "title" not in compact["$defs"]["Address"]  # a model's title restates its $defs key
    assert "title" not in compact["$defs"]["Address"]["properties"]["street"]
    assert properties["mode"]["enum"] == [{"title": "Fast"}, "slow"]  # values are not schemas
    assert compact["required"] == original["required"] and properties["address"] == original["properties"]["address"]
    # A title the tool's name does not generate stays; so does the original, untouched.
    assert compact_schema(original, "other")["title"] == "convert_timeArguments"
    assert original["properties"]["source_timezone"]["title"] == "Source Timezone"


def test_every_wire_format_is_compacted_where_it_keeps_the_schema() -> None:
    schema = {"type": "object", "properties": {"a_b": {"title": "A B", "type": "string", "description": " "}}}
    plain = {"type": "object", "properties": {"a_b": {"type": "string"}}}
    assert compact_declaration({"name": "t", "description": "", "input_schema": schema}) == {
        "name": "t",
        "input_schema": plain,
    }
    chat = {"type": "function", "function": {"name": "t", "description": "x ", "parameters": schema, "strict": True}}
    assert compact_declaration(chat)["function"] == {
        "name": "t",
        "description": "x",
        "parameters": plain,
        "strict": True,
    }
    assert compact_declaration({"name": "t", "inputSchema": schema})["inputSchema"] == plain


async def test_the_model_gets_compact_schemas_and_calls_are_validated_against_the_servers(
    tmp_path: Path, examples_in_process: None
) -> None:
    config = {
        "tools": {
            "mcpServers": {
                "general": {"command": sys.executable, "args": [str(SERVERS / "general.py")], "internalOnly": False}
            }
        }
    }
    path = tmp_path / "toolsift.json"
    path.write_text(json.dumps(config))
    async with Toolbox.from_config(path) as box:
        conversation = box.conversation()
        sent = {tool["name"]: tool for tool in conversation.turn("anthropic").tools}
        exported = box.registry.schemas_for_tools(conversation.scope(), format="anthropic")
        original = {tool["name"]: tool for tool in exported}
        assert sent["general__add"]["input_schema"] == {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        }
        assert original["general__add"]["input_schema"]["title"] == "addArguments"  # the registry's is as it was
        assert sent.keys() == original.keys()
        size = sum(len(json.dumps(tool)) for tool in sent.values())
        assert size < 0.95 * sum(len(json.dumps(tool)) for tool in exported)
        refused = await conversation.call_tool(ToolCall("1", "general__add", {"a": 1, "b": "two"}))
        assert refused.result.is_error and "'two' is not of type 'integer'" in refused.result.text_content()
        added = await conversation.call_tool(ToolCall("2", "general__add", {"a": 1, "b": 2}))
        assert not added.result.is_error and "3" in added.result.text_content()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_a_compact_strict_schema_accepts_and_refuses_what_the_strict_export_does(data: st.DataObject) -> None:
    name, schema = data.draw(
        st.sampled_from(example_schemas("general") + example_schemas("conformance") + example_schemas("flow")),
        label="tool",
    )
    registry = ToolRegistry()
    registry.register(RecordingTool(name, schema=schema))
    exported = registry.schemas_for_tools(format="openai", strict=True)[0]["function"]
    conversation = Conversation(registry)
    sent = conversation.turn("openai", strict=True).tools[0]["function"]
    assert sent["strict"] == exported["strict"]
    assert sent["parameters"] == compact_schema(exported["parameters"], name.partition("__")[2])
    full, compact = Draft202012Validator(exported["parameters"]), Draft202012Validator(sent["parameters"])
    value = data.draw(st.one_of(json_values({"type": "object"}), json_values(exported["parameters"])), label="args")
    assert compact.is_valid(value) == full.is_valid(value)
