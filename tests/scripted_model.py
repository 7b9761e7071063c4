"""A ChatModel that plays back scripted answers: the LLM stand-in for loop tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio

from toolsift.agent import AssistantMessage, Message


class ScriptedModel:
    """Answers with the scripted messages in order; records what it was sent."""

    format = "openai"

    def __init__(self, *answers: AssistantMessage, delay: float = 0.0) -> None:
        self.answers = list(answers)
        self.delay = delay
        self.seen: list[tuple[str, list[Message], list[dict[str, Any]]]] = []

    async def complete(
        self, instructions: str, history: Sequence[Message], tools: list[dict[str, Any]]
    ) -> AssistantMessage:
        self.seen.append((instructions, list(history), tools))
        if self.delay:
            await anyio.sleep(self.delay)
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
