"""Anthropic Messages API."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anthropic

from ..._exceptions import AgentError
from .._messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from .._results import describe_result

__all__ = ["AnthropicChatModel", "to_anthropic_messages"]


def _tool_result(message: ToolMessage) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for part in describe_result(message.result, images=True):
        if part.kind == "image":
            content.append(
                {"type": "image", "source": {"type": "base64", "media_type": part.mime_type, "data": part.data}}
            )
        else:
            content.append({"type": "text", "text": part.text})
    return {
        "type": "tool_result",
        "tool_use_id": message.call.id,
        "content": content,
        "is_error": message.result.is_error,
    }


def to_anthropic_messages(history: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation as Messages API turns; consecutive tool results share one user turn."""
    messages: list[dict[str, Any]] = []
    for message in history:
        if isinstance(message, UserMessage):
            messages.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": message.text}] if message.text else []
            blocks += [
                {
                    "type": "tool_use",
                    "id": c.id,
                    "name": c.name,
                    "input": c.arguments if isinstance(c.arguments, dict) else {"_raw": c.arguments},
                }
                for c in message.tool_calls
            ]
            messages.append({"role": "assistant", "content": blocks})
        elif isinstance(message, ToolMessage):
            block = _tool_result(message)
            previous = messages[-1] if messages else None
            if previous and previous["role"] == "user" and isinstance(previous["content"], list):
                previous["content"].append(block)
            else:
                messages.append({"role": "user", "content": [block]})
    return messages


class AnthropicChatModel:
    """A Claude model as a :class:`~toolsift.agent.ChatModel`.

    Args:
        model: The model name.
        api_key: The key (``load_model`` reads ``ANTHROPIC_API_KEY``).
        base_url: Another endpoint.
        client: A ready ``anthropic.AsyncAnthropic`` to use instead.
        max_tokens: Upper bound of each answer.
    """

    format = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: anthropic.AsyncAnthropic | None = None,
        max_tokens: int = 4096,
    ) -> None:
        self.model = model
        self.max_tokens = max_tokens
        self._client = client or anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0)

    async def complete(
        self, instructions: str, history: Sequence[Message], tools: list[dict[str, Any]]
    ) -> AssistantMessage:
        """One Messages API request.

        Raises:
            AgentError: When the provider answers with an error or cannot be reached.
        """
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": to_anthropic_messages(history),
        }
        if instructions:
            request["system"] = instructions
        if tools:
            request["tools"] = tools
        try:
            response = await self._client.messages.create(**request)
        except anthropic.AnthropicError as exc:
            raise AgentError(f"Anthropic request to model {self.model!r} failed: {exc}") from exc
        text = "".join(b.text for b in response.content if b.type == "text") or None
        calls = tuple(
            ToolCall(id=b.id, name=b.name, arguments=dict(b.input)) for b in response.content if b.type == "tool_use"
        )
        return AssistantMessage(text=text, tool_calls=calls)
