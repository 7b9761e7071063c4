"""Anthropic Messages API tools: ``{"name", "description", "input_schema"}``."""

from __future__ import annotations

from typing import Any

from .._spec import ToolSpec
from ._base import NameRule, base_schema
from ._rules import OPENAI_ANTHROPIC_NAMES

__all__ = ["AnthropicFormat"]


class AnthropicFormat:
    """Tools for ``messages.create(tools=...)``."""

    name = "anthropic"
    name_rule: NameRule | None = OPENAI_ANTHROPIC_NAMES

    def export(self, spec: ToolSpec, exported_name: str, *, strict: bool = False) -> dict[str, Any]:
        """Return the Anthropic tool entry for ``spec``."""
        return {"name": exported_name, "description": spec.description, "input_schema": base_schema(spec)}
