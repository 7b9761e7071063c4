"""A pin's digest: the same for the same definition in any key order, different after any change of a pinned field."""

from __future__ import annotations

from typing import Any

import mcp.types as types
from hypothesis import given
from hypothesis import strategies as st

from toolsift.mcp_sessions._pin_digest import PINNED_FIELDS, definition_diff, tool_definition, tool_digest

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.floats(allow_nan=False, allow_infinity=False) | names,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
    max_leaves=8,
)
schemas = st.dictionaries(names, json_values, max_size=4).map(lambda extra: {"type": "object", **extra})
definitions = st.fixed_dictionaries(
    {"name": names, "inputSchema": schemas},
    optional={
        "title": names,
        "description": st.text(max_size=40),
        "outputSchema": schemas,
        "annotations": st.fixed_dictionaries({}, optional={"readOnlyHint": st.booleans(), "title": names}),
    },
)


def reordered(value: Any, order: list[int]) -> Any:
    """``value`` with the keys of every object in another order (a rotation picked by ``order``)."""
    if isinstance(value, dict):
        keys = list(value)
        shift = order[len(keys) % len(order)] % len(keys) if keys else 0
        return {key: reordered(value[key], order) for key in keys[shift:] + keys[:shift][::-1]}
    if isinstance(value, list):
        return [reordered(item, order) for item in value]
    return value


@given(definitions, st.lists(st.integers(0, 50), min_size=1, max_size=5))
def test_digest_ignores_key_order(definition: dict[str, Any], order: list[int]) -> None:
    assert tool_digest(reordered(definition, order)) == tool_digest(definition)


@given(definitions, st.sampled_from(PINNED_FIELDS), json_values)
def test_digest_changes_with_any_pinned_field(definition: dict[str, Any], field: str, value: Any) -> None:
    changed = {**definition, field: value}
    if changed != definition:
        assert tool_digest(changed) != tool_digest(definition)
        assert definition_diff("s", "t", definition, changed)  # and the change shows in the diff


def test_definition_covers_the_pinned_fields_only() -> None:
    tool = types.Tool(
        name="weather",
        title="Weather",
        description="Current weather.",
        input_schema={"type": "object"},
        output_schema={"type": "object"},
        annotations=types.ToolAnnotations(read_only_hint=True),
        meta={"build": "7"},
        execution=types.ToolExecution(task_support="optional"),
    )
    assert tool_definition(tool) == {
        "name": "weather",
        "title": "Weather",
        "description": "Current weather.",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
    }
    # A field left out and the same field sent as null are the same definition.
    bare = types.Tool(name="weather", input_schema={"type": "object"})
    assert tool_definition(bare) == tool_definition(bare.model_copy(update={"title": None, "description": None}))
