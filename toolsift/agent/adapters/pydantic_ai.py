"""toolsift's tools as a pydantic-ai toolset that follows the conversation turn by turn, instructions included.

    agent = Agent(model, toolsets=[ToolsiftToolset(box.conversation())])

pydantic-ai asks a toolset for its tools and its instructions before every
model request, so a ``/use`` (``await conversation.handle_command("/use
code-assist ...")``) changes what the model sees at its next step: the
skill's tools and its body. The instructions are one block that pydantic-ai
appends to the history when it changes (``on_change="append"``) instead of
rewriting the prompt's start, so the provider's cached prefix holds. Every
call passes the five layers and the audit log; a refusal or a failure is
returned to the model as the tool's answer (an error text it can act on),
never raised, so the run goes on.
"""

from __future__ import annotations

from typing import Any

from ..._install import install_advice

try:
    import pydantic_core
    from pydantic_ai import RunContext
    from pydantic_ai.messages import InstructionPart
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import AbstractToolset
    from pydantic_ai.toolsets.abstract import ToolsetTool
except ImportError as exc:  # pragma: no cover - the extra is installed in the tests
    raise ImportError(f"the pydantic-ai adapter needs pydantic-ai: {install_advice('pydantic-ai')}") from exc

from .._conversation import Conversation
from .._results import result_text
from ._live import LiveTools

__all__ = ["ToolsiftToolset"]

# toolsift validates arguments against the tool's own schema in execute; pydantic-ai only needs a JSON object.
_ANY_OBJECT = pydantic_core.SchemaValidator(
    pydantic_core.core_schema.dict_schema(
        pydantic_core.core_schema.str_schema(), pydantic_core.core_schema.any_schema()
    )
)


class ToolsiftToolset(AbstractToolset[Any]):
    """A conversation's turn tools for a pydantic-ai ``Agent``.

    Args:
        conversation: The toolsift conversation whose scope, skill and permissions apply.
        id: The toolset's id among the agent's toolsets (default ``toolsift``).
        format: The schema format of the names and schemas sent (``openai``; ``gemini`` for Gemini models).
        max_retries: How often pydantic-ai may retry a call whose arguments it could not parse.
    """

    def __init__(
        self, conversation: Conversation, *, id: str = "toolsift", format: str = "openai", max_retries: int = 1
    ) -> None:
        self._live = LiveTools(conversation, format=format)
        self._id = id
        self._max_retries = max_retries

    @property
    def id(self) -> str:
        return self._id

    async def get_instructions(self, ctx: RunContext[Any]) -> InstructionPart | None:
        """The turn's instructions (the active skill's body included), appended to the history when they change."""
        text = await self._live.instructions()
        return InstructionPart(text, dynamic=True, on_change="append", name="turn") if text else None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await self._live.current()
        return {
            tool.name: ToolsetTool(
                toolset=self,
                max_retries=self._max_retries,
                args_validator=_ANY_OBJECT,
                tool_def=ToolDefinition(
                    name=tool.name, description=tool.description, parameters_json_schema=tool.parameters
                ),
            )
            for tool in tools
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> str:
        return result_text(await self._live.call(name, tool_args))
