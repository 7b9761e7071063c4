"""What every framework adapter needs from a conversation: the turn's tools and instructions now, and calls
through the five layers."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from ...registry import ToolResult
from .._conversation import Conversation
from .._messages import ToolCall

__all__ = ["ExportedTool", "LiveTools"]


@dataclass(frozen=True)
class ExportedTool:
    """One tool as a framework declares it to its model.

    Attributes:
        name: The name the model calls (the provider-safe alias where the canonical name does not fit).
        description: What the tool does.
        parameters: Its JSON schema.
    """

    name: str
    description: str
    parameters: dict[str, Any]


class LiveTools:
    """A conversation's tools and instructions as they are at each step of a framework's own loop.

    Frameworks ask for their tools (and, given a hook, their instructions)
    before every model request; asking here each time is what makes ``/use``
    (and a reload, a search unlock) reach the framework's model at its next
    step: the skill's tools and its body. Calls go through
    :meth:`Conversation.call_tool`: the five layers, the audit log, and a
    denial or failure as an error result, never an exception.

    Args:
        conversation: Whose turn scope, skill and permissions apply.
        format: The schema format whose names and schemas the framework sends
            (``openai`` by default: its names fit every provider toolsift knows
            but Gemini, which wants ``gemini``).
    """

    def __init__(self, conversation: Conversation, *, format: str = "openai") -> None:
        self.conversation = conversation
        self.format = format
        self._ids = itertools.count(1)

    async def current(self) -> list[ExportedTool]:
        """The tools of the turn as the active skill's SKILL.md reads now."""
        await self.conversation.refresh_skill()
        return [_exported(entry) for entry in self.conversation.turn(self.format).tools]

    async def instructions(self) -> str:
        """Everything the model should know this turn as one text: the agent's instructions, the
        active skill's body, the instructions of the servers whose tools it sees, resources.

        The text changes only when its meaning does (a ``/use``, a server's tools appearing), so
        a framework that sends it as its system prompt keeps the provider's cached prefix between
        those changes.
        """
        await self.conversation.refresh_skill()
        return self.conversation.instructions_now(format=self.format)

    async def call(self, name: str, arguments: dict[str, Any] | None) -> ToolResult:
        """Run one call the framework's model made; refusals and failures come back as error results."""
        call = ToolCall(id=f"call-{next(self._ids)}", name=name, arguments=dict(arguments or {}))
        return (await self.conversation.call_tool(call)).result


def _exported(entry: dict[str, Any]) -> ExportedTool:
    # Chat Completions nests the function; the Responses API and the others keep it at the top level.
    function = entry.get("function", entry)
    parameters = function.get("parameters") or function.get("input_schema") or function.get("inputSchema") or {}
    return ExportedTool(function["name"], function.get("description") or "", dict(parameters))
