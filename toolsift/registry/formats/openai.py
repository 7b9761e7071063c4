"""OpenAI function tools, for Chat Completions and for the Responses API."""

from __future__ import annotations

from typing import Any

from .._tools import ToolSpec
from ._base import NameRule, base_schema
from ._rules import OPENAI_ANTHROPIC_NAMES
from ._strict import to_strict

__all__ = ["OpenAIFormat", "OpenAIResponsesFormat"]


def _parameters(spec: ToolSpec, strict: bool) -> dict[str, Any]:
    schema = base_schema(spec)
    return to_strict(schema) if strict else schema


class OpenAIFormat:
    """Chat Completions: ``{"type": "function", "function": {...}}``."""

    name = "openai"
    name_rule: NameRule | None = OPENAI_ANTHROPIC_NAMES

    def export(self, spec: ToolSpec, exported_name: str, *, strict: bool = False) -> dict[str, Any]:
        """Return the Chat Completions tool entry for ``spec``."""
        function: dict[str, Any] = {
            "name": exported_name,
            "description": spec.description,
            "parameters": _parameters(spec, strict),
        }
        if strict:
            function["strict"] = True
        return {"type": "function", "function": function}


class OpenAIResponsesFormat:
    """Responses API: the function fields sit at the top level of the tool."""

    name = "openai-responses"
    name_rule: NameRule | None = OPENAI_ANTHROPIC_NAMES

    def export(self, spec: ToolSpec, exported_name: str, *, strict: bool = False) -> dict[str, Any]:
        """Return the Responses API tool entry for ``spec``."""
        return {
            "type": "function",
            "name": exported_name,
            "description": spec.description,
            "parameters": _parameters(spec, strict),
            "strict": strict,
        }
