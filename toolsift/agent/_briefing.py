"""What the model has been told beyond the system prompt, and what to tell it next.

The system prompt stays the same for the whole conversation (the provider
caches it, and everything after it). What changes during a conversation (the
active skill, the servers whose tools appear, the resources context) is told
as a :class:`ContextMessage` appended to the history when it changes, the way
Claude Code injects a skill when it is invoked. A :class:`Briefing` remembers
what was told and answers each round with the news only, so a text is sent
once and again only when its meaning changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import final

from ._messages import ContextMessage

__all__ = ["Briefing", "SkillState"]


@dataclass(frozen=True)
class SkillState:
    """The active skill as the model should know it.

    Attributes:
        name: The skill's name.
        body: Its rendered instructions.
        location: Where its SKILL.md lives ('' when it has no file: a server's prompt).
    """

    name: str
    body: str
    location: str = ""


def skill_section(skill: SkillState) -> str:
    """The skill as the one-text instructions show it (``Conversation.instructions_now``)."""
    return f"# Skill: {skill.name}\n\n{skill.body.strip()}"


def server_section(server: str, text: str) -> str:
    """A server's instructions under a header naming it."""
    return f"# MCP server {server}\n\n{text}"


@final
class Briefing:
    """What one conversation told its model: the skill, server instructions, resources."""

    def __init__(self) -> None:
        self._skill: SkillState | None = None
        self._servers: dict[str, str] = {}
        self._resources = ""

    def news(
        self, skill: SkillState | None, servers: Mapping[str, str], resources: str, *, stopped_why: str = ""
    ) -> list[ContextMessage]:
        """The messages that bring the model up to date, and remember them as told.

        Args:
            skill: The active skill now (None: none).
            servers: Instructions of the servers whose tools the model is shown now.
                A server told before and not shown now is not told again until its text changes.
            resources: The resources context now ('' for none).
            stopped_why: Why a skill stopped, when it did not stop by ``/unuse``.
        """
        told: list[ContextMessage] = []
        before = self._skill
        if before is not None and (skill is None or skill.name != before.name):
            why = f" because {stopped_why}" if stopped_why and skill is None else ""
            told.append(
                ContextMessage(
                    f"Skill {before.name!r} is no longer active{why}. Its instructions no longer apply and its "
                    "tools are no longer in scope (calls to them are refused).",
                    source=f"skill:{before.name}",
                )
            )
        if skill is not None and skill != before:
            updated = before is not None and before.name == skill.name
            told.append(ContextMessage(_skill_text(skill, updated=updated), source=f"skill:{skill.name}"))
        self._skill = skill
        for server, text in servers.items():
            if self._servers.get(server) != text:
                told.append(ContextMessage(server_section(server, text), source=f"server:{server}"))
                self._servers[server] = text
        if resources != self._resources:
            text = resources or "The resources context given earlier no longer applies."
            told.append(ContextMessage(text, source="resources"))
            self._resources = resources
        return told


def _skill_text(skill: SkillState, *, updated: bool) -> str:
    where = f" Its SKILL.md is {skill.location}." if skill.location else ""
    if updated:
        lead = f"The user's active skill {skill.name!r} changed; these instructions replace its earlier ones.{where}"
    else:
        lead = f"The user activated skill {skill.name!r} (/use); follow its instructions until it stops.{where}"
    return f"# Skill: {skill.name}\n\n{lead}\n\n{skill.body.strip()}"
