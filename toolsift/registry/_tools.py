"""What a tool is to run: what it may know of its call, and the protocol it implements."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ._result import ContentBlock, ToolResult
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

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]


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
