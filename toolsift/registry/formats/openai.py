"""OpenAI function tools, for Chat Completions and for the Responses API."""

from __future__ import annotations

from typing import Any

from .._spec import ToolSpec
from ._base import NameRule, base_schema
from ._rules import OPENAI_ANTHROPIC_NAMES
from ._strict import strict_schema

__all__ = ["OpenAIFormat", "OpenAIResponsesFormat"]


def _parameters(spec: ToolSpec, strict: bool) -> tuple[dict[str, Any], bool]:
    """The parameters schema, and whether it is strict (a schema with no strict form stays as it is)."""
    schema = base_schema(spec)
    rewritten = strict_schema(schema) if strict else None
    return (rewritten, True) if rewritten is not None else (schema, False)


class OpenAIFormat:
    """Chat Completions: ``{"type": "function", "function": {...}}``."""

    name = "openai"
    strict_mode = True  # strict=True rewrites the schema for constrained decoding
    name_rule: NameRule | None = OPENAI_ANTHROPIC_NAMES

    def export(self, spec: ToolSpec, exported_name: str, *, strict: bool = False) -> dict[str, Any]:
        """Return the Chat Completions tool entry for ``spec``."""
        parameters, is_strict = _parameters(spec, strict)
        function: dict[str, Any] = {"name": exported_name, "description": spec.description, "parameters": parameters}
        if strict:
            function["strict"] = is_strict
        return {"type": "function", "function": function}


class OpenAIResponsesFormat:
    """Responses API: the function fields sit at the top level of the tool."""

    name = "openai-responses"
    strict_mode = True  # strict=True rewrites the schema for constrained decoding
    name_rule: NameRule | None = OPENAI_ANTHROPIC_NAMES

    def export(self, spec: ToolSpec, exported_name: str, *, strict: bool = False) -> dict[str, Any]:
        """Return the Responses API tool entry for ``spec``."""
        parameters, is_strict = _parameters(spec, strict)
        return {
            "type": "function",
            "name": exported_name,
            "description": spec.description,
            "parameters": parameters,
            "strict": is_strict,
        }
