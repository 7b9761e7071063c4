"""What the registry and the model know of a tool without running it: its spec."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import mcp.types as mcp_types

from ._levels import Level

__all__ = ["ToolSource", "ToolSpec", "repeatable_by"]

ToolSource = Literal["builtin", "function", "mcp", "skill", "meta"]

_EMPTY_OBJECT_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}


def repeatable_by(annotations: mcp_types.ToolAnnotations | None) -> bool:
    """Whether a tool's MCP annotations say a call may run again without more effect (read-only or idempotent)."""
    return annotations is not None and bool(annotations.read_only_hint or annotations.idempotent_hint)


@dataclass(frozen=True)
class ToolSpec:
    """Everything the registry and the model know about a tool, without running it.

    Attributes:
        name: The canonical name: bare for builtin tools, ``server__tool`` for MCP tools.
        description: What the tool does, as shown to the model.
        input_schema: JSON Schema of the arguments (top-level ``type: object``).
        title: A human-readable display name.
        annotations: MCP tool annotations (``readOnlyHint``, ``destructiveHint``, ...).
        output_schema: JSON Schema of structured results, if the tool declares one.
        source: Where the tool comes from.
        server: The MCP server that provides it, for MCP tools.
        remote_name: The name the server itself uses, for MCP tools.
        required_level: The least caller level (layer 5) that may call it.
        required_permissions: Custom permissions the caller must hold (layer 5).
        read_only: True when the tool does not change its environment (plan mode keeps it).
        meta: Free-form metadata (never shown to the model).
    """

    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=lambda: dict(_EMPTY_OBJECT_SCHEMA))
    title: str | None = None
    annotations: mcp_types.ToolAnnotations | None = None
    output_schema: Mapping[str, Any] | None = None
    source: ToolSource = "builtin"
    server: str | None = None
    remote_name: str | None = None
    required_level: Level = Level.READ
    required_permissions: frozenset[str] = frozenset()
    read_only: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def repeatable(self) -> bool:
        """Whether running a call again does nothing more than running it once (read-only or idempotent)."""
        return self.read_only or repeatable_by(self.annotations)

    @property
    def destructive(self) -> bool:
        """MCP's ``destructiveHint``; meaningful only for tools that are not read-only."""
        if self.read_only or (self.annotations is not None and self.annotations.read_only_hint):
            return False
        hint = self.annotations.destructive_hint if self.annotations else None
        return True if hint is None else hint
