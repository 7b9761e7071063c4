"""Provider formats: documented shapes, name rules, schema normalisation, caching."""

from __future__ import annotations

import re
from typing import Any

import mcp.types as mcp_types
import pytest
from jsonschema import Draft202012Validator
from local_tools import RecordingTool

from toolsift import UnknownFormat
from toolsift.registry import ToolRegistry, ToolSpec, TurnScope
from toolsift.registry.formats import FORMATS, get_format
from toolsift.registry.formats._strict import drop_optional_nulls, strict_schema

OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
GEMINI_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$")

RICH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "$defs": {"Tag": {"type": "object", "properties": {"label": {"type": "string"}}, "additionalProperties": False}},
    "properties": {
        "url": {"type": "string", "format": "uri", "description": "Where."},
        "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}},
        "limit": {"type": ["integer", "null"], "default": 10},
        "mode": {"const": "fast"},
        "level": {"enum": [1, 2]},
        "when": {"type": "string", "format": "date-time"},
        "either": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "required": ["url"],
    "additionalProperties": False,
}


class Rich(RecordingTool):
    def __init__(self, name: str) -> None:
        super().__init__(name, schema=RICH_SCHEMA, description="Fetch a page.")
        self.spec = ToolSpec(
            name=name,
            description="Fetch a page.",
            input_schema=RICH_SCHEMA,
            title="Fetch",
            annotations=mcp_types.ToolAnnotations(read_only_hint=True),
            output_schema={"type": "object"},
            source="mcp",
            server="web",
        )


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(Rich("web__fetch.page"))
    registry.register(RecordingTool("web__" + "x" * 100))
    registry.register(RecordingTool("9lives", schema={"properties": {}}))
    return registry


def test_unknown_format_lists_the_available_ones(registry: ToolRegistry) -> None:
    with pytest.raises(UnknownFormat, match="'yaml'; available: anthropic, gemini, mcp, openai, openai-responses"):
        registry.schemas_for_tools(format="yaml")


def test_get_format_returns_format_objects_unchanged() -> None:
    fmt = FORMATS["openai"]
    assert get_format(fmt) is fmt


def test_mcp_format_keeps_canonical_names_and_camel_case(registry: ToolRegistry) -> None:
    first = registry.schemas_for_tools(format="mcp")[0]
    assert first["name"] == "web__fetch.page" and first["title"] == "Fetch"
    assert first["inputSchema"]["$defs"] and first["outputSchema"] == {"type": "object"}
    assert first["annotations"] == {"readOnlyHint": True}
    mcp_types.Tool.model_validate(first)


def test_openai_chat_completions_shape(registry: ToolRegistry) -> None:
    schemas = registry.schemas_for_tools(format="openai")
    for schema in schemas:
        assert schema["type"] == "function" and set(schema["function"]) == {"name", "description", "parameters"}
        assert OPENAI_NAME.match(schema["function"]["name"])
        assert schema["function"]["parameters"]["type"] == "object"
        Draft202012Validator.check_schema(schema["function"]["parameters"])
    third = schemas[2]["function"]["parameters"]
    assert third == {"properties": {}, "type": "object"}


def test_openai_responses_shape(registry: ToolRegistry) -> None:
    for schema in registry.schemas_for_tools(format="openai-responses"):
        assert set(schema) == {"type", "name", "description", "parameters", "strict"}
        assert OPENAI_NAME.match(schema["name"]) and schema["strict"] is False


def test_anthropic_shape(registry: ToolRegistry) -> None:
    for schema in registry.schemas_for_tools(format="anthropic"):
        assert set(schema) == {"name", "description", "input_schema"}
        assert OPENAI_NAME.match(schema["name"]) and schema["input_schema"]["type"] == "object"


def test_gemini_shape_inlines_refs_and_drops_unsupported_keywords(registry: ToolRegistry) -> None:
    schemas = registry.schemas_for_tools(format="gemini")
    for schema in schemas:
        assert GEMINI_NAME.match(schema["name"])
    fetch = schemas[0]
    assert fetch["name"] == "web__fetch.page"
    params = fetch["parameters"]
    text = repr(params)
    assert "$ref" not in text and "$defs" not in text and "additionalProperties" not in text
    props = params["properties"]
    assert props["tags"]["items"] == {"type": "object", "properties": {"label": {"type": "string"}}}
    assert props["limit"] == {"type": "integer", "nullable": True, "default": 10}
    assert "format" not in props["url"] and props["when"]["format"] == "date-time"
    assert props["mode"] == {"enum": ["fast"], "type": "string"}
    assert props["level"] == {"enum": ["1", "2"], "type": "string"}
    assert props["either"] == {"nullable": True, "type": "string"}
    assert schemas[2]["name"].startswith("_9lives_") and "parameters" not in schemas[2]


def test_gemini_cuts_recursive_refs() -> None:
    from toolsift.registry.formats._gemini_schema import to_gemini

    schema = {
        "type": "object",
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
        "properties": {
            "root": {"$ref": "#/$defs/Node"},
            "ext": {"$ref": "http://x/y"},
            "multi": {"type": ["string", "integer"]},
        },
    }
    out = to_gemini(schema)
    assert out["properties"]["root"]["properties"]["next"]["type"] == "object"
    assert out["properties"]["ext"]["type"] == "object"
    assert out["properties"]["multi"]["anyOf"] == [{"type": "string"}, {"type": "integer"}]


def test_openai_strict_mode_requires_everything_and_nulls_optionals(registry: ToolRegistry) -> None:
    fetch = registry.schemas_for_tools(format="openai", strict=True)[0]["function"]
    assert fetch["strict"] is True
    params = fetch["parameters"]
    assert params["additionalProperties"] is False
    assert sorted(params["required"]) == sorted(RICH_SCHEMA["properties"])
    props = params["properties"]
    assert props["url"] == {"type": "string", "description": "Where."}
    assert props["limit"] == {"type": ["integer", "null"]}
    assert props["when"]["type"] == ["string", "null"] and props["when"]["format"] == "date-time"
    assert props["mode"] == {"anyOf": [{"const": "fast"}, {"type": "null"}]}
    assert params["$defs"]["Tag"]["required"] == ["label"]
    assert params["$defs"]["Tag"]["properties"]["label"] == {"type": ["string", "null"]}
    responses = registry.schemas_for_tools(format="openai-responses", strict=True)[0]
    assert responses["strict"] is True and responses["parameters"] == params


def test_strict_mode_leaves_nullable_types_alone() -> None:
    out = strict_schema({"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": {"type": "null"}}})
    assert out is not None
    assert out["properties"] == {"a": {"type": ["string", "null"]}, "b": {"type": "null"}}


def test_strict_mode_puts_null_among_an_optional_enums_values() -> None:
    out = strict_schema({"type": "object", "properties": {"mode": {"type": "string", "enum": ["a", "b"]}}})
    assert out is not None and out["properties"]["mode"] == {"type": ["string", "null"], "enum": ["a", "b", None]}


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"meta": {"type": "object"}}},  # free-form object
        {"type": "object", "properties": {"env": {"type": "object", "additionalProperties": {"type": "string"}}}},
        {"type": "object", "properties": {"x": {"type": "object", "patternProperties": {"^a": {}}}}},
        {"type": "object", "additionalProperties": True},
        {"type": "object", "properties": {"x": {"allOf": [{"type": "string"}, {"minLength": 1}]}}},
        {"anyOf": [{"type": "object"}, {"type": "null"}]},
    ],
)
def test_schemas_without_a_strict_form_are_exported_non_strict(schema: dict[str, object]) -> None:
    registry = ToolRegistry()
    registry.register(RecordingTool("free", schema=schema))
    function = registry.schemas_for_tools(format="openai", strict=True)[0]["function"]
    assert function["strict"] is False and function["parameters"]["type"] == "object"
    responses = registry.schemas_for_tools(format="openai-responses", strict=True)[0]
    assert responses["strict"] is False


def test_a_tool_without_arguments_has_a_strict_form() -> None:
    assert strict_schema({"type": "object"}) == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


def test_drop_optional_nulls_drops_every_optional_null_and_keeps_required_and_undeclared_ones() -> None:
    schema = {
        "type": "object",
        "required": ["must"],
        "properties": {
            "must": {"type": "string"},
            "opt": {"type": "string"},
            "nullable": {"type": ["string", "null"]},
            "any": {},
            "nested": {"type": "object", "properties": {"deep": {"type": "integer"}}},
            "rows": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        },
    }
    value = {
        "must": None,
        "opt": None,
        "nullable": None,
        "any": None,
        "extra": None,
        "nested": {"deep": None},
        "rows": [{"n": None}, {"n": 1}],
    }
    assert drop_optional_nulls(schema, value) == {"must": None, "extra": None, "nested": {}, "rows": [{}, {"n": 1}]}


def test_exported_aliases_resolve_back_for_execution(registry: ToolRegistry) -> None:
    for fmt in ("openai", "anthropic", "gemini"):
        for schema in registry.schemas_for_tools(format=fmt):
            name = schema.get("name") or schema["function"]["name"]
            assert registry.resolve(name) in {"web__fetch.page", "web__" + "x" * 100, "9lives"}


def test_schema_lists_are_cached_per_generation_scope_and_format(registry: ToolRegistry) -> None:
    scope = TurnScope(skill_allowed=["web__*"])
    first = registry.schemas_for_tools(scope, "openai")
    again = registry.schemas_for_tools(TurnScope(skill_allowed=["web__*"]), "openai")
    assert first == again and first is not again and first[0] is again[0]
    registry.register(RecordingTool("web__new"))
    after = registry.schemas_for_tools(scope, "openai")
    assert len(after) == len(first) + 1 and after[0] is first[0]


def test_scope_cache_is_bounded() -> None:
    registry = ToolRegistry()
    registry.register(RecordingTool("a"))
    for index in range(600):
        registry.schemas_for_tools(TurnScope(skill=f"s{index}"))
    assert len(registry._selection._lists) == 512


@pytest.mark.parametrize("fmt", ["mcp", "anthropic", "gemini"])
def test_strict_is_refused_for_a_format_without_a_strict_mode(fmt: str) -> None:
    registry = ToolRegistry()
    registry.register(RecordingTool("a__b"))
    with pytest.raises(ValueError, match=f"strict mode is OpenAI's; format '{fmt}' has none"):
        registry.schemas_for_tools(format=fmt, strict=True)
    assert registry.schemas_for_tools(format=fmt)  # without strict, as before
