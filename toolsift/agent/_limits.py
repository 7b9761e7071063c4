"""Safety limits of the agent loop."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AgentLimits"]


@dataclass(frozen=True)
class AgentLimits:
    """Bounds that keep one user message from running away.

    Attributes:
        max_rounds: Model round trips with tool calls per user message.
        call_timeout: Seconds one tool call may take.
        message_timeout: Seconds one user message may take, model and tools included.
    """

    max_rounds: int = 10
    call_timeout: float = 30.0
    message_timeout: float = 120.0

    def __post_init__(self) -> None:
        if self.max_rounds < 1:
            raise ValueError(f"max_rounds must be at least 1, got {self.max_rounds!r}")
        for field in ("call_timeout", "message_timeout"):
            value = getattr(self, field)
            if not value > 0:
                raise ValueError(f"{field} must be a positive number of seconds, got {value!r}")
