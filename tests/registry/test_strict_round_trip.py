"""OpenAI strict mode, both ways, for every tool of the example and reference servers.

A strict-mode model must send every property, with ``null`` for the optional
ones it leaves out. For any arguments valid against a tool's own schema, the
strict form of them must be valid against the exported strict schema, and
``execute`` must turn it back into exactly the original arguments.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from collections.abc import Callable, Mapping
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from interop_servers import EVERYTHING, everything
from json_values import json_values
from jsonschema import Draft202012Validator
from local_tools import RecordingTool
from tool_schemas import example_schemas, process_schemas

from toolsift.config import StdioServer
from toolsift.registry import ToolRegistry


@functools.cache
def reference_tools() -> tuple[tuple[str, dict[str, Any]], ...]:
    """Every tool of the example servers (in this process) and of the reference servers (as processes), listed once."""
    found = example_schemas("general") + example_schemas("flow")
    # The PyPI reference servers, where installed (.ci/run installs them).
    for stem, module in (("time", "mcp_server_time"), ("git", "mcp_server_git")):
        if importlib.util.find_spec(module) is not None:
            found += process_schemas(
                StdioServer(command=sys.executable, args=("-m", module), protocol="legacy").with_name(stem)
            )
    if EVERYTHING.exists():
        found += process_schemas(everything("legacy"))
    return found


ObjectRule = Callable[[Mapping[str, Any], Mapping[str, Any], dict[str, Any], Callable[..., Any]], Any]


def _objects(rule: ObjectRule, schema: Mapping[str, Any], value: Any, root: Mapping[str, Any]) -> Any:
    """``value`` with ``rule`` applied to every object that ``schema`` (local ``$ref`` followed) declares."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        schema = root["$defs"][ref.removeprefix("#/$defs/")]
    if isinstance(value, list):
        items = schema.get("items")
        return [_objects(rule, items, item, root) for item in value] if isinstance(items, Mapping) else value
    properties = schema.get("properties")
    if not isinstance(value, dict) or not isinstance(properties, Mapping):
        return value
    return rule(schema, properties, value, lambda sub, item: _objects(rule, sub, item, root))


def strict_form(schema: Mapping[str, Any], value: Any) -> Any:
    """What a strict-mode model sends for ``value``: every optional property present, null when left out."""
    return _objects(
        lambda _, properties, obj, walk: {
            name: walk(sub, obj[name]) if name in obj else None for name, sub in properties.items()
        },
        schema,
        value,
        schema,
    )


def meant(schema: Mapping[str, Any], value: Any) -> Any:
    """What ``value`` means to the tool: an optional property set to null is a property left out.

    In strict mode the two cannot be told apart (docs/agent-loops.md, "OpenAI strict mode"), so
    toolsift reads every null of an optional property as "left out".
    """

    def rule(
        object_schema: Mapping[str, Any], properties: Mapping[str, Any], obj: dict[str, Any], walk: Callable[..., Any]
    ) -> dict[str, Any]:
        required = set(object_schema.get("required") or ())
        return {
            name: walk(properties[name], item) if name in properties else item
            for name, item in obj.items()
            if not (item is None and name in properties and name not in required)
        }

    return _objects(rule, schema, value, schema)


def test_every_reference_server_contributes_tools() -> None:
    servers = {name.split("__")[0] for name, _ in reference_tools()}
    assert {"general", "flow"} <= servers
    assert len(reference_tools()) > 200


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_strict_export_round_trips_arguments(data: st.DataObject) -> None:
    name, schema = data.draw(st.sampled_from(reference_tools()), label="tool")
    registry = ToolRegistry()
    tool = RecordingTool(name, schema=schema)
    registry.register(tool)
    exported = registry.schemas_for_tools(format="openai", strict=True)[0]["function"]
    arguments = data.draw(json_values({**schema, "type": "object"}), label="arguments")
    sent = strict_form(schema, arguments) if exported["strict"] else arguments
    if exported["strict"]:
        assert Draft202012Validator(exported["parameters"]).is_valid(sent), (name, sent)
    result = anyio.run(registry.execute, registry.exported_name(name, "openai"), sent)
    assert not result.is_error, result.text_content()
    assert tool.calls == [meant(schema, arguments)]


def test_leaving_every_optional_property_out_is_accepted() -> None:
    schemas = dict(reference_tools())
    registry = ToolRegistry()
    tools = {name: RecordingTool(name, schema=schema) for name, schema in schemas.items()}
    registry.register_many(tools.values())
    checked = 0
    for exported in registry.schemas_for_tools(format="openai", strict=True):
        function = exported["function"]
        name = registry.resolve(function["name"])
        if not function["strict"] or function["parameters"]["required"] != list(function["parameters"]["properties"]):
            continue
        optional = [p for p in function["parameters"]["properties"] if p not in schemas[name].get("required", ())]
        if len(optional) != len(function["parameters"]["properties"]):
            continue
        sent = dict.fromkeys(optional)
        assert Draft202012Validator(function["parameters"]).is_valid(sent), name
        anyio.run(registry.execute, function["name"], sent)
        assert tools[name].calls == [{}], name
        checked += 1
    assert checked >= 10


def test_only_schemas_with_free_form_parts_lose_strict_mode() -> None:
    schemas = dict(reference_tools())
    registry = ToolRegistry()
    registry.register_many([RecordingTool(name, schema=schema) for name, schema in schemas.items()])
    loose = [
        registry.resolve(e["function"]["name"])
        for e in registry.schemas_for_tools(format="openai", strict=True)
        if not e["function"]["strict"]
    ]
    for name in loose:
        text = repr(schemas[name])
        assert "'type': 'object'" in text or "allOf" in text or "anyOf" in text, name
    assert len(loose) < len(schemas) / 4
