"""What flows through the pipeline: one call in, one result out."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

from ..registry import Permissions, ProgressCallback, ToolResult, TurnScope

__all__ = ["REFUSAL_KEY", "CallHandler", "Refusal", "ToolCall", "refusal_of", "refuse"]

#: ``ToolResult.meta`` key of a result the pipeline made instead of the tool's.
REFUSAL_KEY = "toolsift.refusal"


@dataclass(frozen=True)
class ToolCall:
    """One tool call on its way through the pipeline.

    Middleware pass it on unchanged or as a ``dataclasses.replace`` copy (the
    permission filter swaps in the served profile's scope and permissions).

    Attributes:
        name: The tool's canonical registry name (``read_file``, ``github__search``).
        arguments: The arguments as the caller sent them (not yet validated).
        scope: The turn scope the call is checked against (layers 1-4).
        permissions: The caller's permissions (layer 5).
        timeout: Seconds the tool may run, or None for no limit.
        progress: Receives the tool's progress notifications.
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    scope: TurnScope = field(default_factory=TurnScope)
    permissions: Permissions = field(default_factory=Permissions)
    timeout: float | None = None
    progress: ProgressCallback | None = None


#: The shape every stage and the innermost handler share.
CallHandler = Callable[[ToolCall], Awaitable[ToolResult]]


class Refusal(TypedDict):
    """What ``ToolResult.meta[REFUSAL_KEY]`` holds.

    Attributes:
        stage: The stage that refused (``SecurityGuard``, ``ResultGuard``,
            ``registry``, ``pipeline``).
        audited: True when the registry already wrote the audit event.
    """

    stage: str
    audited: bool


def refuse(stage: str, message: str, *, audited: bool = False) -> ToolResult:
    """An error result made by the pipeline in place of the tool's, marked with its stage."""
    result = ToolResult.error(message)
    result.meta[REFUSAL_KEY] = Refusal(stage=stage, audited=audited)
    return result


def refusal_of(result: ToolResult) -> Refusal | None:
    """The refusal mark of ``result``, or None when the tool's own result came through."""
    mark = result.meta.get(REFUSAL_KEY)
    return cast(Refusal, mark) if isinstance(mark, dict) else None
