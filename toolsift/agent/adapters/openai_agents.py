"""toolsift's tools for the OpenAI Agents SDK, as an MCP server the SDK lists before every turn,
and the turn's instructions as the agent's dynamic ``instructions``.

    server = ToolsiftAgentsServer(box.conversation())
    agent = Agent(name="assistant", instructions=server.instructions, mcp_servers=[server])

The Agents SDK asks its MCP servers for their tools, and a callable
``instructions`` for the system prompt, at every turn, so a ``/use`` on the
conversation changes what the model sees at its next step: the skill's tools
and its body. The text stays the same until its meaning changes, so the
provider's cached prefix holds between changes. Nothing is spawned: the
toolbox already holds the sessions, and calls go through the conversation
(the five layers, the audit log); a refusal or a failure is an ``isError``
result the model reads, never an exception that ends the run.
"""

from __future__ import annotations

from typing import Any

import mcp.types as types

from ..._install import install_advice

try:
    from agents.mcp import MCPServer
except ImportError as exc:  # pragma: no cover - the extra is installed in the tests
    raise ImportError(f"the OpenAI Agents SDK adapter needs openai-agents: {install_advice('openai-agents')}") from exc

from .._conversation import Conversation
from ._live import LiveTools

__all__ = ["ToolsiftAgentsServer"]


class ToolsiftAgentsServer(MCPServer):
    """A conversation's turn tools, served to an Agents SDK ``Agent`` in-process.

    Args:
        conversation: The toolsift conversation whose scope, skill and permissions apply.
        name: The server's name in the SDK's traces.
    """

    def __init__(self, conversation: Conversation, *, name: str = "toolsift") -> None:
        super().__init__()
        self._live = LiveTools(conversation)
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    async def connect(self) -> None:
        """Nothing to connect: the toolbox owns the MCP sessions."""

    async def cleanup(self) -> None:
        """Nothing to close: the toolbox closes its sessions when it exits."""

    async def instructions(self, run_context: Any, agent: Any) -> str:
        """The turn's instructions (the active skill's body included), for ``Agent(instructions=...)``."""
        return await self._live.instructions()

    async def list_tools(self, run_context: Any = None, agent: Any = None) -> list[types.Tool]:
        return [
            types.Tool(name=tool.name, description=tool.description, input_schema=tool.parameters)
            for tool in await self._live.current()
        ]

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> types.CallToolResult:
        result = await self._live.call(tool_name, arguments)
        return types.CallToolResult(
            content=list(result.content), structured_content=result.structured_content, is_error=result.is_error
        )

    async def list_prompts(self) -> types.ListPromptsResult:
        """toolsift's skills are switched on with ``/use``, not offered as prompts here."""
        return types.ListPromptsResult(prompts=[])

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> types.GetPromptResult:
        raise LookupError(f"toolsift offers no prompt {name!r} to the Agents SDK; use '/use {name}' instead")
