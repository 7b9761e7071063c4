"""Small in-process tools for registry tests: they record the calls they receive."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio

from toolsift._names import split_name
from toolsift.registry import Level, ToolContext, ToolResult, ToolSpec

OBJECT = {"type": "object", "properties": {"text": {"type": "string"}}}


class RecordingTool:
    """Returns its name and arguments; remembers every call."""

    def __init__(
        self,
        name: str,
        *,
        read_only: bool = False,
        schema: Mapping[str, Any] | None = None,
        level: Level | None = None,
        permissions: frozenset[str] = frozenset(),
        description: str = "",
    ) -> None:
        server, _ = split_name(name)
        self.spec = ToolSpec(
            name=name,
            description=description or f"The {name} tool.",
            input_schema=dict(schema if schema is not None else OBJECT),
            server=server,
            source="mcp" if server else "builtin",
            read_only=read_only,
            required_level=level if level is not None else (Level.READ if read_only else Level.WRITE),
            required_permissions=permissions,
        )
        self.calls: list[dict[str, Any]] = []

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.calls.append(args)
        return ToolResult.text(f"{self.spec.name} {sorted(args.items())}")


class SlowTool(RecordingTool):
    """Sleeps until cancelled or `seconds` pass."""

    def __init__(self, name: str, seconds: float) -> None:
        super().__init__(name)
        self.seconds = seconds
        self.cancelled = False

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            await anyio.sleep(self.seconds)
        except anyio.get_cancelled_exc_class():
            self.cancelled = True
            raise
        return ToolResult.text("done")


class BrokenTool(RecordingTool):
    """Raises a plain exception, as a buggy tool would."""

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise RuntimeError("disk on fire")
