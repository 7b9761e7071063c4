"""What a conversation needs from the MCP servers skills own (``toolsift._skill_servers`` provides it)."""

from __future__ import annotations

from typing import Protocol

__all__ = ["SkillServerHost", "SkillServerLease"]


class SkillServerLease(Protocol):
    """A conversation's hold on one skill's servers, from ``/use`` until released."""

    @property
    def skill(self) -> str:
        """The skill whose servers are held."""
        ...

    def release(self) -> None:
        """Let the servers go (idempotent)."""
        ...


class SkillServerHost(Protocol):
    """Starts a skill's own servers at ``/use`` and keeps their tools to that skill."""

    async def acquire(self, skill: str) -> SkillServerLease | None:
        """Start ``skill``'s servers and hold them (None when it owns none).

        Raises ``SkillUnavailable`` when one cannot start.
        """
        ...

    def problem(self, skill: str) -> str | None:
        """Why ``skill``'s servers cannot work, known without starting them, or None."""
        ...

    def hidden_from(self, skill: str | None) -> tuple[str, ...]:
        """Patterns of the skill-owned tools that ``skill`` does not own: they stay out of its turns."""
        ...
