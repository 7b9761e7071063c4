"""An offline model that answers from a script: the whole agent loop, seen without a provider or a key.

``--model scripted:FILE`` reads FILE (JSON or YAML): a list of answers, one per model call, in order. An
answer is a string (the model's text) or a mapping with ``text`` and/or ``tool_calls``, each call a mapping
with ``name`` and ``arguments``::

    - text: Let me look.
      tool_calls:
        - name: general__add
          arguments: {a: 2, b: 3}
    - The sum is 5.

The calls go through the same scope and permission checks as a real model's, so a call the turn does not
allow gets the same error.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from ..._exceptions import AgentError
from .._messages import AssistantMessage, Message, ToolCall

__all__ = ["ScriptedChatModel"]


class ScriptedChatModel:
    """Answers each ``complete`` with the script's next answer; an error once the script is used up.

    Attributes:
        format: The tool schema format (OpenAI's, the most common one).
        calls: What each call was given, ``(instructions, tools)``, for a caller that shows or checks it.
    """

    format = "openai"

    def __init__(self, path: str | Path) -> None:
        """Read the script now, so a bad file stops the chat before it starts.

        Raises:
            AgentError: The file is missing, not JSON/YAML, or an answer has the wrong shape (named by number).
        """
        self.path = Path(path)
        try:
            loaded: Any = yaml.safe_load(self.path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise AgentError(f"Cannot read the model script {self.path}: {exc.strerror or exc}") from exc
        except yaml.YAMLError as exc:
            raise AgentError(f"The model script {self.path} is not valid JSON or YAML: {exc}") from exc
        if not isinstance(loaded, list) or not loaded:
            raise AgentError(f"The model script {self.path} must be a non-empty list of answers")
        self.answers = tuple(_answer(self.path, number, entry) for number, entry in enumerate(loaded, 1))
        self.calls: list[tuple[str, list[dict[str, Any]]]] = []

    async def complete(
        self, instructions: str, history: Sequence[Message], tools: list[dict[str, Any]]
    ) -> AssistantMessage:
        """The next answer of the script.

        Raises:
            AgentError: Every answer was given already.
        """
        if len(self.calls) >= len(self.answers):
            raise AgentError(f"The model script {self.path} has no answer left (it has {len(self.answers)})")
        self.calls.append((instructions, tools))
        return self.answers[len(self.calls) - 1]


def _answer(path: Path, number: int, entry: object) -> AssistantMessage:
    """One script entry as the model's message; ``number`` counts from 1 in the error."""
    where = f"The model script {path}, answer {number}"
    if isinstance(entry, str):
        return AssistantMessage(text=entry)
    if not isinstance(entry, dict) or not entry or set(entry) - {"text", "tool_calls"}:
        raise AgentError(f"{where}: must be a string or a mapping with 'text' and/or 'tool_calls'")
    text = entry.get("text")
    calls = entry.get("tool_calls") or []
    if text is not None and not isinstance(text, str):
        raise AgentError(f"{where}: 'text' must be a string")
    if not isinstance(calls, list):
        raise AgentError(f"{where}: 'tool_calls' must be a list")
    tool_calls = []
    for index, call in enumerate(calls, 1):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise AgentError(f"{where}, tool call {index}: needs a 'name'")
        arguments = call.get("arguments", {})
        if not isinstance(arguments, dict) or set(call) - {"name", "arguments"}:
            raise AgentError(f"{where}, tool call {index}: only 'name' and 'arguments' (a mapping) are allowed")
        tool_calls.append(ToolCall(id=f"scripted-{number}-{index}", name=call["name"], arguments=arguments))
    return AssistantMessage(text=text, tool_calls=tuple(tool_calls))
