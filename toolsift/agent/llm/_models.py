"""What each model can do for the prompt cache, read from its name, so that defaults are the best it allows.

A model name that says nothing (a local server's, a new family) gets the features of the newest models
of its provider only when it reads as one of them; the adapters fall back, with one log line, when a
server refuses a feature anyway (:func:`refusal`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

__all__ = ["Features", "anthropic_features", "refusal", "responses_features", "warn_refused"]

logger = logging.getLogger("toolsift.agent.llm")

# claude-sonnet-5-5, claude-opus-4-8-20260101, claude-haiku-4-5; older names (claude-3-5-sonnet-...) do not match.
_CLAUDE = re.compile(r"claude-(?P<family>opus|sonnet|haiku|fable|mythos)-(?P<major>\d+)(?:-(?P<minor>\d)(?!\d))?")
# gpt-5.4, gpt-5.6-terra, gpt-5-mini (5.0), gpt-6
_GPT = re.compile(r"gpt-(?P<major>\d+)(?:\.(?P<minor>\d+))?")
# Mid-conversation system messages and tool changes, by family: the first version that has them
# (https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages; not Sonnet 5).
_MID_CONVERSATION = {"fable": (5, 0), "mythos": (5, 0), "opus": (4, 8), "sonnet": (5, 5), "haiku": (5, 5)}


@dataclass(frozen=True)
class Features:
    """What a model offers that keeps its prompt's start unchanged.

    Attributes:
        tool_search: Deferred tools and the provider's own search over them (Claude 4.5 on; GPT-5.4 on).
        mid_conversation: Changes to the instructions and the tools appended as messages
            (Anthropic's system messages with ``tool_addition``/``tool_removal``; Responses'
            ``additional_tools`` items, which only add).
    """

    tool_search: bool = False
    mid_conversation: bool = False


def anthropic_features(model: str) -> Features:
    """What a Claude model offers, by its name."""
    found = _CLAUDE.match(model)
    if found is None:
        return Features()
    version = (int(found["major"]), int(found["minor"] or 0))
    return Features(tool_search=version >= (4, 5), mid_conversation=version >= _MID_CONVERSATION[found["family"]])


def responses_features(model: str) -> Features:
    """What an OpenAI model behind the Responses API offers, by its name."""
    found = _GPT.match(model)
    if found is None:
        return Features()
    newest = (int(found["major"]), int(found["minor"] or 0)) >= (5, 4)
    return Features(tool_search=newest, mid_conversation=newest)


def refusal(exc: BaseException) -> bool:
    """Whether a provider error reads as the request's form being refused (400, 422), so that the
    same request without an optional feature may pass."""
    return getattr(exc, "status_code", None) in (400, 422)


def warn_refused(provider: str, model: str, feature: str, exc: BaseException) -> None:
    """The one log line of a fallback."""
    logger.warning(
        "%s model %r refused %s (%s); toolsift goes on without it for this model", provider, model, feature, exc
    )
