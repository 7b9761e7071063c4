"""OpenAI Chat Completions (and OpenAI-compatible servers via ``base_url``).

OpenAI caches prompts of 1,024 tokens or more by prefix, without markers
(https://platform.openai.com/docs/guides/prompt-caching): what keeps a conversation cached is that
each request starts with the bytes of the one before. The reply's ``usage`` says how much was read.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

import openai

from ..._exceptions import AgentError
from .._messages import AssistantMessage, ContextMessage, Message, ToolCall, ToolMessage, Usage, UserMessage
from .._results import result_text
from ._context import context_text

__all__ = ["OpenAIChatModel"]


def to_openai_messages(instructions: str, history: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation as Chat Completions messages; tool results become text (images described).

    A :class:`ContextMessage` becomes a user message of its own under a one-line marker. Every chat
    template knows the user role; a system message after the first breaks templates that take the
    system prompt only at the start (Qwen3's raises "System message must be at the beginning"),
    ``developer`` is unknown to most local servers, and merging the text into a neighbouring user
    message would rewrite a message an earlier request already sent, and the provider cached.
    """
    messages: list[dict[str, Any]] = [{"role": "system", "content": instructions}] if instructions else []
    for message in history:
        if isinstance(message, UserMessage):
            messages.append({"role": "user", "content": message.text})
        elif isinstance(message, ContextMessage):
            messages.append({"role": "user", "content": context_text(message)})
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
        prompt_cache_key: Sent with every request to api.openai.com, so that the requests of this
            model's conversations reach the same cache: ``True`` (the default) draws one key for
            this instance, a string is used as given (to share a cache across processes), ``False``
            sends none. Other servers get it only when it is a string; some reject unknown fields.
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
        prompt_cache_key: str | bool = True,
    ) -> None:
        self.model = model
        self.strict = strict
        self._client = client or openai.AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0)
        self.prompt_cache_key: str | None = None
        if isinstance(prompt_cache_key, str):
            self.prompt_cache_key = prompt_cache_key
        elif prompt_cache_key and self._client.base_url.host == "api.openai.com":
            self.prompt_cache_key = f"toolsift-{uuid.uuid4().hex[:16]}"

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
        if self.prompt_cache_key is not None:
            request["prompt_cache_key"] = self.prompt_cache_key
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
        return AssistantMessage(text=message.content, tool_calls=calls, usage=_usage(response.usage))


def _usage(usage: openai.types.CompletionUsage | None) -> Usage | None:
    """Usage from ``prompt_tokens`` (all input) and ``prompt_tokens_details`` (what the cache served;
    ``cache_write_tokens`` where an OpenAI-compatible gateway reports writes)."""
    if usage is None:
        return None
    details = usage.prompt_tokens_details
    read = (details.cached_tokens or 0) if details is not None else 0
    written = (details.cache_write_tokens or 0) if details is not None else 0
    return Usage(usage.prompt_tokens, read, written, usage.completion_tokens)
