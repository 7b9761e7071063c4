"""What a tool call returns: ``ToolResult``, in MCP's own content model.

A module of its own, below the rest of the registry: whoever answers for a
call (a tool, an approver that cannot answer yet) returns one.
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as mcp_types
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ContentBlock", "ToolResult"]

ContentBlock = mcp_types.ContentBlock


class ToolResult(BaseModel):
    """The outcome of one tool call, in MCP's own content model.

    A tool that ran and failed returns ``is_error=True`` with a text that says
    which tool failed and why; it does not raise. ``meta`` is toolsift's own
    bookkeeping (flags, refusals); ``mcp_meta`` is the ``_meta`` an MCP server
    sent with the result, passed on unchanged.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    content: list[ContentBlock] = Field(default_factory=list)
    structured_content: Any = None
    is_error: bool = False
    meta: dict[str, Any] = Field(default_factory=dict)
    mcp_meta: dict[str, Any] | None = None

    @classmethod
    def text(cls, text: str, *, structured: Any = None) -> ToolResult:
        """A successful result holding one text block."""
        return cls(content=[mcp_types.TextContent(text=text)], structured_content=structured)

    @classmethod
    def error(cls, text: str) -> ToolResult:
        """A failed result holding one text block that explains the failure."""
        return cls(content=[mcp_types.TextContent(text=text)], is_error=True)

    @classmethod
    def from_value(cls, value: Any) -> ToolResult:
        """Turn what a Python function returned into a result.

        Strings become text; content blocks pass through; models, dicts and lists
        become JSON text plus structured content; ``None`` becomes an empty result.
        """
        if isinstance(value, ToolResult):
            return value
        if value is None:
            return cls()
        if isinstance(value, str):
            return cls.text(value)
        if isinstance(
            value,
            mcp_types.TextContent
            | mcp_types.ImageContent
            | mcp_types.AudioContent
            | mcp_types.EmbeddedResource
            | mcp_types.ResourceLink,
        ):
            return cls(content=[value])
        if isinstance(value, BaseModel):
            value = value.model_dump(mode="json")
        text = json.dumps(value, ensure_ascii=False, default=str)
        structured = value if isinstance(value, dict) else {"result": value}
        return cls.text(text, structured=structured)

    @classmethod
    def from_mcp(cls, result: mcp_types.CallToolResult) -> ToolResult:
        """Keep every content block and the structured content of an MCP result."""
        return cls(
            content=list(result.content),
            structured_content=result.structured_content,
            is_error=result.is_error,
            mcp_meta=dict(result.meta) if result.meta else None,
        )

    def to_mcp(self) -> mcp_types.CallToolResult:
        """The same result as an MCP ``CallToolResult``."""
        structured = self.structured_content
        return mcp_types.CallToolResult(
            content=list(self.content), structured_content=structured, is_error=self.is_error, _meta=self.mcp_meta
        )

    def text_content(self) -> str:
        """The text blocks joined by newlines (other blocks are left out)."""
        return "\n".join(b.text for b in self.content if isinstance(b, mcp_types.TextContent))
