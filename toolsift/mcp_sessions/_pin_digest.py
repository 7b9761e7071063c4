"""What a pin covers of a tool's definition, its digest, and a readable diff of two definitions.

A pin covers what the model reads and what decides how the tool is called:
``name``, ``title``, ``description``, ``inputSchema``, ``outputSchema`` and
``annotations``. Fields a server leaves out (or sends as ``null``) are left
out, so a server that starts sending ``"title": null`` has not changed its
tool. ``_meta``, ``icons`` and ``execution`` are not covered: the model never
reads them.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from typing import Any

import mcp.types as types

__all__ = ["PINNED_FIELDS", "definition_diff", "tool_definition", "tool_digest"]

#: The fields of a tool's definition (as MCP spells them) that a pin covers.
PINNED_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


def tool_definition(tool: types.Tool) -> dict[str, Any]:
    """The pinned fields of ``tool``, as JSON values under their MCP names (absent and null fields left out)."""
    data = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {field: data[field] for field in PINNED_FIELDS if field in data}


def _canonical(definition: dict[str, Any]) -> str:
    # Sorted keys, no insignificant whitespace: two servers that send the same definition in another key
    # order (or spacing) give the same text, so the same digest.
    return json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tool_digest(definition: dict[str, Any]) -> str:
    """``sha256:`` and the hex SHA-256 of ``definition`` as canonical JSON (sorted keys, no spaces, UTF-8)."""
    return "sha256:" + hashlib.sha256(_canonical(definition).encode("utf-8")).hexdigest()


def definition_diff(server: str, tool: str, old: dict[str, Any], new: dict[str, Any]) -> str:
    """A unified diff of the pinned and the listed definition, one JSON member per line."""

    def lines(definition: dict[str, Any]) -> list[str]:
        return json.dumps(definition, sort_keys=True, indent=2, ensure_ascii=False).splitlines()

    return "\n".join(
        difflib.unified_diff(
            lines(old), lines(new), f"{server}/{tool} (pinned)", f"{server}/{tool} (listed now)", lineterm=""
        )
    )
