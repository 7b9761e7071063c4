"""OpenAI Chat Completions (and OpenAI-compatible servers via ``base_url``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import openai

from ..._exceptions import AgentError
from .._messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from .._results import result_text

__all__ = ["OpenAIChatModel", "to_openai_messages"]


def to_openai_messages(instructions: str, history: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation as Chat Completions messages; tool results become text (images described)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": instructions}] if instructions else []
    for message in history:
        if isinstance(message, UserMessage):
            messages.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": message.text}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {
                            "name": c.name,
                            "arguments": c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments),
                        },
                    }
                    for c in message.tool_calls
                ]
            messages.append(entry)
        elif isinstance(message, ToolMessage):
            prefix = "[tool error] " if message.result.is_error else ""
            messages.append(
                {"role": "tool", "tool_call_id": message.call.id, "content": prefix + result_text(message.result)}
            )
    return messages


def _arguments(raw: str | None) -> dict[str, Any] | str:
    try:
        value = json.loads(raw or "{}")
    except (json.JSONDecodeError, RecursionError):  # nesting past the parser's depth is no object either
        return raw or ""
    return value if isinstance(value, dict) else raw or ""


class OpenAIChatModel:
    """A Chat Completions model as a :class:`~toolsift.agent.ChatModel`.

    Args:
        model: The model name.
        api_key: The key (``load_model`` reads ``OPENAI_API_KEY``).
        base_url: Another OpenAI-compatible endpoint (a local server).
        client: A ready ``openai.AsyncOpenAI`` to use instead.
        strict: Send tools in strict mode.
    """

    format = "openai"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        strict: bool = False,
    ) -> None:
        self.model = model
        self.strict = strict
        self._client = client or openai.AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0)

    async def complete(
        self, instructions: str, history: Sequence[Message], tools: list[dict[str, Any]]
    ) -> AssistantMessage:
        """One Chat Completions request.

        Raises:
            AgentError: When the provider answers with an error or cannot be reached.
        """
        request: dict[str, Any] = {"model": self.model, "messages": to_openai_messages(instructions, history)}
        if tools:
            request["tools"] = tools
        try:
            response = await self._client.chat.completions.create(**request)
        except openai.OpenAIError as exc:
            raise AgentError(f"OpenAI request to model {self.model!r} failed: {exc}") from exc
        if not response.choices:
            raise AgentError(f"OpenAI model {self.model!r} returned no choices")
        message = response.choices[0].message
        calls = tuple(
            ToolCall(id=c.id, name=c.function.name, arguments=_arguments(c.function.arguments))
            for c in (message.tool_calls or [])
            if c.type == "function"
        )
        return AssistantMessage(text=message.content, tool_calls=calls)
