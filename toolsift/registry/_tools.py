"""What a tool is to run: the result it returns, what it may know of its call, and the protocol it implements."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import mcp.types as mcp_types
from pydantic import BaseModel, ConfigDict, Field

from ._spec import ToolSpec

if TYPE_CHECKING:
    from ._permissions import Permissions
    from ._scope import TurnScope

__all__ = [
    "ContentBlock",
    "Forward",
    "ProgressCallback",
    "Tool",
    "ToolContext",
    "ToolResult",
    "Unlocks",
]

ContentBlock = mcp_types.ContentBlock
ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]


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


class Unlocked(Protocol):
    """What an unlock changed: the names the caps pushed out."""

    @property
    def evicted(self) -> Sequence[str]: ...


class Unlocks(Protocol):
    """A caller's unlocked tools, which ``search_tools`` adds what it finds to (``toolsift.search.Discovery``)."""

    @property
    def unlocked(self) -> frozenset[str]: ...

    def unlock(self, names: Iterable[str]) -> Unlocked: ...


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may know about its call.

    Attributes:
        call_id: Unique per call; appears in audit events.
        scope: The turn scope the call was made under.
        permissions: The caller's permissions.
        timeout: Seconds the call may take, or None for no limit.
        progress: Called with (progress, total, message) when the tool reports progress.
        discovery: The caller's unlocked tools, for ``search_tools`` to unlock into (see ``CallRecord``).
        forward: The caller's own way of making an MCP server's tool call (see ``CallRecord``).
    """

    call_id: str
    scope: TurnScope | None = None
    permissions: Permissions | None = None
    timeout: float | None = None
    progress: ProgressCallback | None = None
    discovery: Unlocks | None = None
    forward: Forward | None = None


@runtime_checkable
class Tool(Protocol):
    """Anything the registry can list and call.

    The registry calls :meth:`call` only after the five layers and argument
    validation have passed, from whatever task runs ``execute``. A tool that
    fails returns ``ToolResult.error(...)``; an exception escaping ``call`` is
    turned into such a result by the registry. If the caller is cancelled, the
    cancellation propagates into ``call``.
    """

    @property
    def spec(self) -> ToolSpec:
        """The tool's static description."""
        ...

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the tool with validated arguments."""
        ...


#: How a caller that speaks MCP itself (a gateway, for its client) makes the call of an MCP server's tool:
#: given the tool, its validated arguments and the context, the outcome. Tools of other kinds never use it.
Forward = Callable[[Tool, dict[str, Any], ToolContext], Awaitable[ToolResult]]
