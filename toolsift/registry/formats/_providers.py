"""The formats each provider's API takes a tool declaration in: MCP's own, OpenAI Chat Completions and Responses,
Anthropic Messages, Gemini function declarations."""

from __future__ import annotations

from typing import Any

from .._spec import ToolSpec
from ._base import NameRule, base_schema
from ._gemini_schema import to_gemini
from ._rules import GEMINI_NAMES, OPENAI_ANTHROPIC_NAMES
from ._strict import strict_schema

__all__ = ["AnthropicFormat", "GeminiFormat", "MCPFormat", "OpenAIFormat", "OpenAIResponsesFormat"]


class MCPFormat:
    """Tools as an MCP server lists them, camelCase keys as on the wire."""

    name = "mcp"
    name_rule: NameRule | None = None

    def export(self, spec: ToolSpec, exported_name: str, *, strict: bool = False) -> dict[str, Any]:
        """Return the ``tools/list`` entry for ``spec``."""
        out: dict[str, Any] = {"name": exported_name, "description": spec.description, "inputSchema": base_schema(spec)}
        if spec.title:
            out["title"] = spec.title
        if spec.output_schema is not None:
            out["outputSchema"] = dict(spec.output_schema)
        if spec.annotations is not None:
            annotations = spec.annotations.model_dump(by_alias=True, exclude_none=True, mode="json")
            if annotations:
                out["annotations"] = annotations
        return out


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


class AnthropicFormat:
    """Tools for ``messages.create(tools=...)``."""

    name = "anthropic"
    name_rule: NameRule | None = OPENAI_ANTHROPIC_NAMES

    def export(self, spec: ToolSpec, exported_name: str, *, strict: bool = False) -> dict[str, Any]:
        """Return the Anthropic tool entry for ``spec``."""
        return {"name": exported_name, "description": spec.description, "input_schema": base_schema(spec)}


class GeminiFormat:
    """Declarations for ``tools=[{"functionDeclarations": [...]}]``."""

    name = "gemini"
    name_rule: NameRule | None = GEMINI_NAMES

    def export(self, spec: ToolSpec, exported_name: str, *, strict: bool = False) -> dict[str, Any]:
        """Return the Gemini function declaration for ``spec``."""
        declaration: dict[str, Any] = {"name": exported_name, "description": spec.description}
        parameters = to_gemini(base_schema(spec))
        if parameters.get("properties"):
            declaration["parameters"] = parameters
        return declaration
