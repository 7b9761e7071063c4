"""Hypothesis strategies for values of a JSON Schema: the subset MCP tools use, checked by a validator."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st
from jsonschema import Draft202012Validator

_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_SCALARS: dict[str, st.SearchStrategy[Any]] = {
    "string": _TEXT,
    "integer": st.integers(-1000, 1000),
    "number": st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    "boolean": st.booleans(),
    "null": st.none(),
}


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part]
        return _resolve(target, root)
    return schema


def _values(schema: Any, root: Mapping[str, Any], depth: int) -> st.SearchStrategy[Any]:
    if not isinstance(schema, Mapping):
        return st.none()
    schema = _resolve(schema, root)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(list(schema["enum"]))
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        return st.one_of([_values(branch, root, depth) for branch in branches])
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else ["object" if "properties" in schema else "string"]
    options = []
    for one in kinds:
        if one == "object":
            options.append(_object(schema, root, depth))
        elif one == "array":
            items = schema.get("items", {"type": "string"})
            low = schema.get("minItems", 0)
            options.append(
                st.lists(
                    _values(items, root, depth + 1) if depth < 4 else st.none(),
                    min_size=low,
                    max_size=max(low, min(schema.get("maxItems", 3), 3)),
                )
            )
        elif one == "string" and "pattern" in schema:
            options.append(st.from_regex(schema["pattern"], fullmatch=True))
        elif one in ("integer", "number") and ("minimum" in schema or "maximum" in schema):
            low, high = schema.get("minimum", -1000), schema.get("maximum", 1000)
            options.append(st.integers(int(low), int(high)) if one == "integer" else st.floats(low, high))
        else:
            options.append(_SCALARS.get(one, _TEXT))
    return st.one_of(options)


def _object(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> st.SearchStrategy[dict[str, Any]]:
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    if depth > 4:
        return st.just({})
    fields = {name: _values(sub, root, depth + 1) for name, sub in properties.items() if name in required}
    optional = {name: _values(sub, root, depth + 1) for name, sub in properties.items() if name not in required}
    return st.fixed_dictionaries(fields, optional=optional)


def json_values(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid against ``schema`` (generated for its shape, then filtered by a real validator)."""
    validator = Draft202012Validator(schema)
    return _values(schema, schema, 0).filter(validator.is_valid)
