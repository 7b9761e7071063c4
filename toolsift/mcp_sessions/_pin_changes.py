"""What one review of a server's listing finds against its pins: the changed or added tools, and what is kept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, final

import mcp.types as types

from ._pin_digest import definition_diff, tool_definition, tool_digest

__all__ = ["PinReview", "ToolChange", "tool_change", "tool_pin"]


@final
@dataclass(frozen=True)
class ToolChange:
    """A tool whose listed definition differs from its pin, or that was added after the server's first listing.

    Attributes:
        server: The server's name.
        tool: The tool's name on the server.
        pinned: The digest pinned ('' for an added tool).
        listed: The digest of what the server lists now.
        diff: A unified diff of the two definitions (an added one against nothing).
    """

    server: str
    tool: str
    pinned: str
    listed: str
    diff: str

    @property
    def added(self) -> bool:
        """Whether the server added the tool after its first listing (nothing was pinned for it)."""
        return not self.pinned

    @property
    def what(self) -> str:
        """What the server did, in words."""
        if self.added:
            return f"added tool {self.tool!r} after its first listing ({self.listed[:19]})"
        digests = f"{self.pinned[:19]} -> {self.listed[:19]}"
        return f"changed the definition of tool {self.tool!r} since it was pinned ({digests})"

    def refusal(self) -> str:
        """Why a call of this tool is refused, and how to accept it."""
        done = "added this tool after its first listing" if self.added else "changed its definition since it was pinned"
        digests = self.listed[:19] if self.added else f"{self.pinned[:19]} -> {self.listed[:19]}"
        return (
            f"MCP server {self.server!r} {done} ({digests}); see the change with 'toolsift check', accept it with "
            f'\'toolsift trust --tools {self.server}\', or set "pinTools": "accept" on the server'
        )


@final
@dataclass(frozen=True)
class PinReview:
    """What one listing of a server's tools comes to.

    Attributes:
        kept: The tools that may be registered, in the server's order (each name once).
        held: Changed tools held back (``pinTools: hold``).
        warned: Changed tools kept usable (``pinTools: warn``).
        problem: Why nothing could be checked (an unreadable pin file); every tool is then held.
    """

    kept: tuple[types.Tool, ...]
    held: tuple[ToolChange, ...] = ()
    warned: tuple[ToolChange, ...] = ()
    problem: str | None = None


def tool_pin(tool: types.Tool) -> dict[str, Any]:
    """What is pinned of ``tool``: its definition and digest."""
    definition = tool_definition(tool)
    return {"digest": tool_digest(definition), "definition": definition}


def tool_change(server: str, tool: str, pinned: dict[str, Any] | None, listed: dict[str, Any]) -> ToolChange:
    """The change from the pin ``pinned`` (None: the tool was added) to the pin of what is listed now."""
    diff = definition_diff(server, tool, pinned["definition"] if pinned else {}, listed["definition"])
    return ToolChange(server, tool, pinned["digest"] if pinned else "", listed["digest"], diff)
