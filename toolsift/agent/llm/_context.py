"""How adapters show a :class:`~toolsift.agent.ContextMessage` to a model."""

from __future__ import annotations

from .._messages import ContextMessage

__all__ = ["context_text"]


def context_text(message: ContextMessage) -> str:
    """The message's text under a one-line marker, so the model reads it as context the
    application added (a skill's instructions, a server's) rather than something the user typed."""
    label = f"Context ({message.source})" if message.source else "Context"
    return f"[{label}]\n{message.text}"
