"""Gemini function declarations (one entry of ``functionDeclarations``)."""

from __future__ import annotations

from typing import Any

from .._spec import ToolSpec
from ._base import NameRule, base_schema
from ._gemini_schema import to_gemini
from ._rules import GEMINI_NAMES

__all__ = ["GeminiFormat"]


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
