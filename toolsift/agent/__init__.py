"""The agent-loop helpers: ``/use`` and friends, turns, tool calls, limits, LLM adapters."""

from .._public import publish
from ._active_skill import SkillSource as SkillSource
from ._commands import Command as Command
from ._commands import parse_command as parse_command
from ._conversation import AgentReply as AgentReply
from ._conversation import ChatModel as ChatModel
from ._conversation import CommandReply as CommandReply
from ._conversation import Conversation as Conversation
from ._conversation import Turn as Turn
from ._messages import AssistantMessage as AssistantMessage
from ._messages import Message as Message
from ._messages import ToolCall as ToolCall
from ._messages import ToolMessage as ToolMessage
from ._messages import UserMessage as UserMessage
from ._results import ResultPart as ResultPart
from ._results import describe_result as describe_result
from ._results import result_text as result_text
from ._sampling import model_sampler as model_sampler

__all__ = [
    "AgentReply",
    "AssistantMessage",
    "ChatModel",
    "Command",
    "CommandReply",
    "Conversation",
    "Message",
    "ResultPart",
    "SkillSource",
    "ToolCall",
    "ToolMessage",
    "Turn",
    "UserMessage",
    "describe_result",
    "model_sampler",
    "parse_command",
    "result_text",
]

publish(globals(), __name__, __all__)
