"""The agent-loop helpers: ``/use`` and friends, turns, tool calls, limits, LLM adapters."""

from .._public import publish
from ._conversation import Conversation as Conversation
from ._messages import AssistantMessage as AssistantMessage
from ._messages import ContextMessage as ContextMessage
from ._messages import Message as Message
from ._messages import ToolCall as ToolCall
from ._messages import ToolMessage as ToolMessage
from ._messages import Usage as Usage
from ._messages import UserMessage as UserMessage
from ._results import result_text as result_text
from ._sampling import model_sampler as model_sampler
from ._turn import ChatModel as ChatModel

__all__ = [
    "AssistantMessage",
    "ChatModel",
    "ContextMessage",
    "Conversation",
    "Message",
    "ToolCall",
    "ToolMessage",
    "Usage",
    "UserMessage",
    "model_sampler",
    "result_text",
]

publish(globals(), __name__, __all__)
