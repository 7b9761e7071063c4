"""What one round of the agent loop exchanges: the model it drives, the turn it sends, the replies it gives."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .._exceptions import LimitExceeded
from ..registry import TurnScope
from ._messages import AssistantMessage, Message, ToolMessage, Usage

__all__ = ["AgentReply", "ChatModel", "CommandReply", "Turn"]


class ChatModel(Protocol):
    """An LLM behind a provider SDK, as the agent loop drives it.

    A model whose provider searches tools natively (Anthropic's tool search,
    OpenAI's ``tool_search``) may also have a ``defers_tools`` attribute set to
    True: the agent loop then calls ``complete(instructions, history, tools,
    deferred=...)``, where ``deferred`` holds the schemas of the internal tools the
    turn's scope lets the model load now (for the provider to load by
    ``ToolMessage.references`` or its own search); a skill's tools are then
    loaded by a ``search_tools`` exchange the conversation appends, or put in
    ``tools`` where that costs less. Models without it are called with the
    three arguments alone. One whose provider's search loads a deferred tool
    when the model calls it may also set ``loads_on_demand``: its global tools
    are then deferred too, and a skill's tools are named rather than loaded.

    Attributes:
        format: The schema format its tools use (``openai``, ``anthropic``, ...).
        images_in_tool_results: Whether tool results may carry images.
    """

    format: str

    async def complete(
        self, instructions: str, history: Sequence[Message], tools: list[dict[str, Any]]
    ) -> AssistantMessage:
        """Send the conversation and return the model's answer.

        Raises:
            AgentError: When the provider fails (the message says which and why).
        """
        ...


@dataclass(frozen=True)
class Turn:
    """What the model gets for one round: instructions, tools and the scope behind them.

    Attributes:
        instructions: The system prompt: the same for the whole conversation (base
            instructions and plan mode); what changes arrives as a ``ContextMessage``.
        tools: Schemas the model sees now, in the conversation's stable order.
        scope: The scope calls of this round are checked against.
        deferred: Schemas a model with native tool search (``defers_tools``) is given with
            deferred loading: exactly the tools ``scope`` lets it load now, never one it forbids,
            in the order first deferred (calls are checked against ``scope``); empty for other models.
    """

    instructions: str
    tools: list[dict[str, Any]]
    scope: TurnScope
    deferred: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class CommandReply:
    """The answer to a slash command, for the user (never sent to the model)."""

    text: str
    ok: bool = True


@dataclass
class AgentReply:
    """The outcome of one user message.

    Attributes:
        text: What to show the user.
        rounds: Model round trips that asked for tools.
        tool_calls: Every tool message produced, in order.
        limit: The limit that stopped the loop, if one did.
        command: True when the input was a slash command.
        notices: What the user should know that is not the model's answer, such
            as the active skill being dropped because its SKILL.md was removed or broke.
        usage: Tokens of every model request this message made, as the provider counted
            them (``usage.cached_share`` is the prompt-cache hit rate).
    """

    text: str
    rounds: int = 0
    tool_calls: list[ToolMessage] = field(default_factory=list)
    limit: LimitExceeded | None = None
    command: bool = False
    notices: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
