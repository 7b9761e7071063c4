"""Schema rewriting for OpenAI's strict function calling, and its way back.

Strict mode requires every object to set ``additionalProperties: false`` and to
list all its properties as required; optional properties therefore become
nullable (an optional enum gets ``null`` among its values). Keywords strict mode
refuses are dropped: ``execute`` still validates against the tool's own schema.

Some schemas have no strict form. A free-form object (``{"type": "object"}``
with no properties, or with ``additionalProperties``/``patternProperties`` that
admit any key) would become ``{}``-only, which makes the tool useless; ``allOf``
and a root ``anyOf`` are refused by the provider. Such a tool is exported
non-strict (``"strict": false``) with its schema as it is: the model can still
call it, only without constrained decoding. :func:`strict_schema` returns None
for them.

The way back is :func:`drop_optional_nulls`: a strict model sends ``null`` for
every optional property it leaves out, and those nulls are dropped before
validation and forwarding, so the tool sees the property left out and applies
its own default. A null for an optional property therefore always means "left
out", even where the tool's schema takes null: in strict mode the two cannot be
told apart, and leaving out is what a strict model means almost every time.

Written by hand because no maintained library does this rewrite for arbitrary
MCP schemas.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["drop_optional_nulls", "strict_schema"]

# Keywords OpenAI's structured-output subset rejects.
_UNSUPPORTED = frozenset(
    {
        "default",
        "examples",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contentEncoding",
        "contentMediaType",
        "if",
        "then",
        "else",
        "not",
        "dependentRequired",
        "dependentSchemas",
        "$schema",
        "$id",
        "$comment",
        "readOnly",
        "writeOnly",
        "deprecated",
        "minContains",
        "maxContains",
        "contains",
        "uniqueItems",
    }
)
_SUPPORTED_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})


class _NoStrictForm(Exception):
    """Raised inside the rewrite when a part of the schema cannot be expressed strictly."""


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if "enum" in schema and None not in schema["enum"]:
        schema = {**schema, "enum": [*schema["enum"], None]}
    if "const" in schema:
        return {"anyOf": [schema, {"type": "null"}]}
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]} if kind != "null" else schema
    if isinstance(kind, list):
        return schema if "null" in kind else {**schema, "type": [*kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def _is_object(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in schema


def _rewrite(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_rewrite(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "allOf" in schema:
        raise _NoStrictForm("allOf")
    if _is_object(schema):
        extra = schema.get("additionalProperties")
        if not schema.get("properties") and extra is not False:
            raise _NoStrictForm("a free-form object")
        if "patternProperties" in schema or (extra not in (None, False)):
            raise _NoStrictForm("an object with arbitrary keys")
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _UNSUPPORTED or (key == "format" and value not in _SUPPORTED_FORMATS):
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: _rewrite(sub) for name, sub in value.items()}
        else:
            out["anyOf" if key == "oneOf" else key] = _rewrite(value)
    if _is_object(out):
        properties: dict[str, Any] = out.setdefault("properties", {})
        required = set(out.get("required", []))
        for name, sub in list(properties.items()):
            if name not in required and isinstance(sub, dict):
                properties[name] = _nullable(sub)
        out["required"] = list(properties)
        out["additionalProperties"] = False
    return out


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """A strict-mode copy of a tool's input schema, or None when it has no strict form.

    The root is the tool's argument object: with no properties it means a tool
    without arguments, which strict mode expresses as an empty object.
    """
    if "anyOf" in schema or "oneOf" in schema:
        return None
    root = {**schema, "properties": dict(schema.get("properties") or {})}
    if not root["properties"] and "additionalProperties" not in root:
        root["additionalProperties"] = False
    try:
        rewritten: dict[str, Any] = _rewrite(root)
    except _NoStrictForm:
        return None
    return rewritten


def _resolve(schema: Any, root: Mapping[str, Any]) -> Any:
    """Follow a local ``$ref`` (``#/$defs/Name``); anything else is returned as it is."""
    for _ in range(32):  # a cycle of refs resolves to nothing in particular
        ref = schema.get("$ref") if isinstance(schema, Mapping) else None
        if not (isinstance(ref, str) and ref.startswith("#/")):
            return schema
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        schema = target
    return None


def drop_optional_nulls(schema: Mapping[str, Any], value: Any) -> Any:
    """``value`` without the nulls a strict model sends for the optional properties it leaves out.

    Every property that ``schema`` declares but does not require loses a
    ``null`` value; nested objects (local ``$ref`` too) and arrays of objects
    are walked. A null for a required property (validation decides) or for a
    property ``schema`` does not declare stays as it is.
    """
    return _drop(schema, value, schema)


def _drop(schema: Any, value: Any, root: Mapping[str, Any]) -> Any:
    schema = _resolve(schema, root)
    if not isinstance(schema, Mapping):
        return value
    if isinstance(value, list):
        items = _resolve(schema.get("items"), root)
        return [_drop(items, item, root) for item in value] if isinstance(items, Mapping) else value
    if not isinstance(value, dict) or not _is_object(schema):
        return value
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    out: dict[str, Any] = {}
    for name, item in value.items():
        sub = properties.get(name)
        if item is None and name not in required and sub is not None:
            continue
        out[name] = _drop(sub, item, root)
    return out
