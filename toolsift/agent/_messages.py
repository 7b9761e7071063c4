"""Provider-neutral conversation messages and tool calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..registry import ToolResult

__all__ = ["AssistantMessage", "ContextMessage", "Message", "ToolCall", "ToolMessage", "Usage", "UserMessage"]


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
class ContextMessage:
    """Text the conversation adds for the model between turns, not typed by the user.

    A skill's instructions at ``/use``, a server's instructions when its tools
    first appear, the resources of ``resources: true`` servers: appended to the
    history rather than written into the system prompt, so that the prompt
    prefix the provider cached stays the same. Adapters send it in the
    provider's own way (a user text block, a ``developer`` message).

    Attributes:
        text: What the model reads.
        source: Where it comes from (``skill:pdf``, ``server:github``, ``resources``), for display and audit.
        added: Tools, by the names the model calls, offered again from here on (they were withdrawn).
        withdrawn: Tools, by the names the model calls, no longer offered from here on. An adapter
            whose provider takes tool changes mid-conversation sends both as such (Anthropic's
            ``tool_addition`` and ``tool_removal``); for the others the text says it.
    """

    text: str
    source: str = ""
    added: tuple[str, ...] = ()
    withdrawn: tuple[str, ...] = ()
    role: Literal["context"] = "context"


@dataclass(frozen=True)
class Usage:
    """The input and output tokens one model request cost, as the provider counted them.

    Attributes:
        input_tokens: Every input token, cached or not.
        cache_read_tokens: Input tokens served from the provider's prompt cache.
        cache_write_tokens: Input tokens written to the cache (billed apart where the provider says so).
        output_tokens: Tokens the model generated.
        cost: What the request cost in USD, by the adapter's price table (cache reads at their
            discount, writes at their premium); None when the model is not in the table. A sum
            counts the requests whose cost is known.
    """

    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None

    def __add__(self, other: Usage) -> Usage:
        costs = [cost for cost in (self.cost, other.cost) if cost is not None]
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.output_tokens + other.output_tokens,
            sum(costs) if costs else None,
        )

    @property
    def cached_share(self) -> float:
        """The share of input tokens read from the cache (0.0 when there was no input)."""
        return self.cache_read_tokens / self.input_tokens if self.input_tokens else 0.0


@dataclass(frozen=True)
class AssistantMessage:
    """What the model answered: text, tool calls, or both.

    Attributes:
        text: The answer's text.
        tool_calls: The calls it asked for.
        usage: What the request cost, when the provider said.
        provider_blocks: The provider's own content blocks (a server-side tool search and its
            results, say), sent back verbatim by the same provider's adapter so that the next
            request's prefix matches this one; other adapters ignore them.
    """

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    provider_blocks: tuple[dict[str, Any], ...] = ()
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True)
class ToolMessage:
    """The result of one tool call, as the model will read it."""

    call: ToolCall
    result: ToolResult
    references: tuple[str, ...] = ()
    """Tools the call made available (what ``search_tools`` found), by the names the model calls;
    adapters whose provider loads deferred tools by reference send them as such."""
    role: Literal["tool"] = "tool"


Message = UserMessage | AssistantMessage | ToolMessage | ContextMessage
