"""What a tool is to run: what it may know of its call, and the protocol it implements."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from ._extensions import find_extension
from ._result import ToolResult
from ._spec import ToolSpec

if TYPE_CHECKING:
    from ._permissions import Permissions
    from ._scope import TurnScope

__all__ = [
    "ProgressCallback",
    "Tool",
    "ToolContext",
]

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]
E = TypeVar("E")


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may know about its call.

    Attributes:
        call_id: Unique per call; appears in audit events.
        scope: The turn scope the call was made under.
        permissions: The caller's permissions.
        timeout: Seconds the call may take, or None for no limit.
        progress: Called with (progress, total, message) when the tool reports progress.
        extensions: The call record's extensions (see ``CallRecord.extensions``), passed on unread.
    """

    call_id: str
    scope: TurnScope | None = None
    permissions: Permissions | None = None
    timeout: float | None = None
    progress: ProgressCallback | None = None
    extensions: tuple[object, ...] = ()

    def extension(self, kind: type[E]) -> E | None:
        """The extension of type ``kind`` the call carries (``ctx.extension(Discovery)``), or None."""
        return find_extension(self.extensions, kind)


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
