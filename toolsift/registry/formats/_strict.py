"""Schema rewriting for OpenAI's strict function calling.

Strict mode requires every object to set ``additionalProperties: false`` and to
list all its properties as required; optional properties therefore become
nullable. Keywords strict mode refuses are dropped. Written by hand because no
maintained library does this rewrite for arbitrary MCP schemas.
"""

from __future__ import annotations

from typing import Any

__all__ = ["to_strict"]

# Keywords OpenAI's structured-output subset rejects.
_UNSUPPORTED = frozenset({
    "default", "examples", "minProperties", "maxProperties", "patternProperties", "propertyNames",
    "unevaluatedProperties", "unevaluatedItems", "contentEncoding", "contentMediaType", "if", "then", "else",
    "not", "dependentRequired", "dependentSchemas", "$schema", "$id", "$comment", "readOnly", "writeOnly",
    "deprecated", "minContains", "maxContains", "contains", "uniqueItems",
})
_SUPPORTED_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]} if kind != "null" else schema
    if isinstance(kind, list):
        return schema if "null" in kind else {**schema, "type": [*kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def to_strict(schema: Any) -> Any:
    """Return a strict-mode copy of a JSON Schema (the input is not changed)."""
    if isinstance(schema, list):
        return [to_strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _UNSUPPORTED:
            continue
        if key == "format" and value not in _SUPPORTED_FORMATS:
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: to_strict(sub) for name, sub in value.items()}
        else:
            out[key] = to_strict(value)
    is_object = out.get("type") == "object" or "properties" in out
    if is_object:
        properties: dict[str, Any] = out.setdefault("properties", {})
        required = set(out.get("required", []))
        for name, sub in list(properties.items()):
            if name not in required and isinstance(sub, dict):
                properties[name] = _nullable(sub)
        out["required"] = list(properties)
        out["additionalProperties"] = False
    return out
