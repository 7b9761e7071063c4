"""MCP's own ``Tool`` shape (``tools/list``), canonical names unchanged."""

from __future__ import annotations

from typing import Any

from .._spec import ToolSpec
from ._base import NameRule, base_schema

__all__ = ["MCPFormat"]


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
