"""Sampling requests of MCP servers, answered by the agent's own model.

A server that asks for a completion (``sampling/createMessage``) gets one
from the model the agent already talks to: the request's system prompt
becomes the instructions, its messages the history, and no tools are
offered. Content other than text is named, not sent, so that any provider
can answer.
"""

from __future__ import annotations

import mcp.types as types

from .._exceptions import ToolsiftError
from ..mcp_sessions import SamplingHandler
from ._messages import AssistantMessage, Message, UserMessage
from ._turn import ChatModel

__all__ = ["model_sampler"]


def _text(content: object) -> str:
    blocks = content if isinstance(content, list) else [content]
    return "\n".join(
        block.text if isinstance(block, types.TextContent) else f"[{getattr(block, 'type', '?')} content]"
        for block in blocks
    )


def model_sampler(model: ChatModel, *, name: str = "toolsift-agent") -> SamplingHandler:
    """A sampling callback (``ClientCallbacks.sampling``) that asks ``model``.

    Args:
        model: The agent's model.
        name: What the answer's ``model`` field says.
    """

    async def sample(
        server: str, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        history: list[Message] = [
            UserMessage(_text(m.content)) if m.role == "user" else AssistantMessage(text=_text(m.content))
            for m in params.messages
        ]
        try:
            answer = await model.complete(params.system_prompt or "", history, [])
        except ToolsiftError as exc:
            return types.ErrorData(code=types.INTERNAL_ERROR, message=f"the agent's model failed: {exc}")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text=answer.text or ""), model=name, stop_reason="endTurn"
        )

    return sample
