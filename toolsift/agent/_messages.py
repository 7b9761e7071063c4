"""Provider-neutral conversation messages and tool calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..registry import ToolResult

__all__ = ["AssistantMessage", "Message", "ToolCall", "ToolMessage", "UserMessage"]


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model asked for.

    Attributes:
        id: The provider's call id (echoed back with the result).
        name: The name the model used (canonical or alias).
        arguments: Parsed arguments, or the raw text when the model sent invalid JSON.
    """

    id: str
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)


@dataclass(frozen=True)
class UserMessage:
    """What the user typed."""

    text: str
    role: Literal["user"] = "user"


@dataclass(frozen=True)
class AssistantMessage:
    """What the model answered: text, tool calls, or both."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True)
class ToolMessage:
    """The result of one tool call, as the model will read it."""

    call: ToolCall
    result: ToolResult
    role: Literal["tool"] = "tool"


Message = UserMessage | AssistantMessage | ToolMessage
