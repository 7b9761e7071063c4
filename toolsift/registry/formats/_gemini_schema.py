"""Schema rewriting for Gemini's OpenAPI-subset function declarations.

Gemini accepts no ``$ref``/``$defs`` and refuses keywords such as
``additionalProperties``; type unions become ``nullable``. Local references are
inlined (a cycle is cut to a plain object). Written by hand because no
maintained library targets Gemini's subset.
"""

from __future__ import annotations

from typing import Any, cast

__all__ = ["to_gemini"]

_KEEP = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "items",
        "properties",
        "required",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "title",
        "minLength",
        "maxLength",
        "pattern",
        "default",
        "propertyOrdering",
        "minProperties",
        "maxProperties",
        "example",
    }
)
_FORMATS = {"string": {"enum", "date-time"}, "integer": {"int32", "int64"}, "number": {"float", "double"}}


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any] | None:
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, dict) else None


def _convert(schema: Any, root: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = _resolve(ref, root)
        if target is None or ref in seen:
            return {"type": "object", "description": schema.get("description", f"(recursive {ref})")}
        merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return _convert(merged, root, (*seen, ref))
    out: dict[str, Any] = {}
    kind = schema.get("type")
    if isinstance(kind, list):
        others = [k for k in kind if k != "null"]
        if len(others) < len(kind):
            out["nullable"] = True
        kind = others[0] if len(others) == 1 else None
        if len(others) > 1:
            out["anyOf"] = [{"type": k} for k in others]
    if "const" in schema and "enum" not in schema:
        out["enum"] = [schema["const"]]
    for key, value in schema.items():
        if key not in _KEEP or key == "type":
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _convert(sub, root, seen) for name, sub in value.items()}
        elif key in ("items",):
            out[key] = _convert(value, root, seen)
        elif key == "anyOf" and isinstance(value, list):
            variants = [v for v in value if not (isinstance(v, dict) and v.get("type") == "null")]
            if len(variants) < len(value):
                out["nullable"] = True
            converted = [_convert(v, root, seen) for v in variants]
            if len(converted) == 1:
                out.update(converted[0])
            else:
                out[key] = converted
        elif key == "format":
            if isinstance(kind, str) and value in _FORMATS.get(kind, set()):
                out[key] = value
        else:
            out[key] = value
    if isinstance(kind, str):
        out["type"] = kind
    if "enum" in out:
        # Gemini enums are string-only.
        out["enum"] = [v if isinstance(v, str) else str(v) for v in out["enum"]]
        out["type"] = "string"
    return out


def to_gemini(schema: dict[str, Any]) -> dict[str, Any]:
    """Return a Gemini-compatible copy of a JSON Schema (the input is not changed)."""
    return cast(dict[str, Any], _convert(schema, schema, ()))
