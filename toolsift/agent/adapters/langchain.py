"""toolsift's tools and instructions as LangChain objects for the conversation's current turn.

    adapter = LangChainTools(box.conversation())
    model = chat_model.bind_tools(await adapter.current())
    messages = [await adapter.system_message(), *history]

LangChain binds tools to a model once, so ask again after a ``/use`` (or at
every step of a hand-written loop, as cheap as a dict lookup when nothing
changed): the tools are the turn's, and the system message its instructions
(the active skill's body included), as the skill reads now. The message's
text changes only when its meaning does, so the provider's cached prefix
holds between changes. A call passes the five layers and the audit log; a
refusal or a failure comes back as the tool message's error content
(``status="error"``), not as an exception that ends the run.
"""

from __future__ import annotations

from typing import Any

from ..._install import install_advice

try:
    from langchain_core.messages import SystemMessage
    from langchain_core.tools import BaseTool, StructuredTool, ToolException
except ImportError as exc:  # pragma: no cover - the extra is installed in the tests
    raise ImportError(f"the LangChain adapter needs langchain-core: {install_advice('langchain')}") from exc

from .._conversation import Conversation
from .._results import result_text
from ._live import ExportedTool, LiveTools

__all__ = ["LangChainTools"]


class LangChainTools:
    """Builds LangChain tools from a conversation's current turn.

    Args:
        conversation: The toolsift conversation whose scope, skill and permissions apply.
        format: The schema format of the names and schemas (``openai``; ``gemini`` for Gemini models).
    """

    def __init__(self, conversation: Conversation, *, format: str = "openai") -> None:
        self._live = LiveTools(conversation, format=format)

    async def current(self) -> list[BaseTool]:
        """The turn's tools now, as ``StructuredTool`` objects that call through toolsift."""
        return [self._tool(tool) for tool in await self._live.current()]

    async def system_message(self) -> SystemMessage:
        """The turn's instructions now (the active skill's body included), as the conversation's system message."""
        return SystemMessage(content=await self._live.instructions())

    def _tool(self, tool: ExportedTool) -> BaseTool:
        live = self._live

        async def call(**arguments: Any) -> str:
            result = await live.call(tool.name, arguments)
            if result.is_error:
                raise ToolException(result_text(result))
            return result_text(result)

        return StructuredTool(
            name=tool.name,
            description=tool.description,
            args_schema=tool.parameters,
            coroutine=call,
            handle_tool_error=True,
        )
