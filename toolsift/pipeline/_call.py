"""How the pipeline marks a result it made in place of the tool's.

The call record and the handler shape are the registry's (``CallRecord``,
``CallHandler``): the same for a served call and an agent-loop call.
"""

from __future__ import annotations

from typing import TypedDict, cast

from ..registry import ToolResult

__all__ = ["REFUSAL_KEY", "Refusal", "refusal_of", "refuse"]

#: ``ToolResult.meta`` key of a result the pipeline made instead of the tool's.
REFUSAL_KEY = "toolsift.refusal"


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
