"""SKILL.md skills and server prompts behind one ``get``/``invocable`` interface."""

from __future__ import annotations

from collections.abc import Mapping
from typing import final

from ..skills import Skill, SkillSet, SkillsLoader
from ..skills._internal import SkillProblem
from ._mcp_skills import McpServedSkill
from ._prompt_skills import McpPromptSkill, PromptSession, prompt_skills
from ._served_skills import ServedSkills

__all__ = ["AnySkill", "SkillCatalog"]

AnySkill = Skill | McpPromptSkill | McpServedSkill


@final
class SkillCatalog:
    """Every skill ``/use`` can activate: SKILL.md skills, the prompts of connected servers, then their skills.

    It is a ``SkillSource`` for the conversation helper and a skill provider for
    the search index. Both sources are read live: a loader's latest snapshot
    and each session's latest prompt list. Prompt skills are rebuilt only when a
    session's catalog object changes, so the same objects come back between
    changes (the search index compares them by identity).

    Args:
        skills: A ``SkillsLoader`` (its current snapshot is used) or a fixed ``SkillSet``.
        sessions: Server name -> session, read on every lookup (an ``McpSessionGroup``
            is live, so sessions added by a reload appear).
        served: The skills servers offer through the MCP Skills extension (``<server>/<skill>``).
    """

    def __init__(
        self,
        skills: SkillsLoader | SkillSet | None = None,
        sessions: Mapping[str, PromptSession] | None = None,
        served: ServedSkills | None = None,
    ) -> None:
        self._skills = skills
        self._sessions = sessions
        self.served = served
        self._prompts: dict[str, tuple[PromptSession, object, list[McpPromptSkill]]] = {}

    def _skill_set(self) -> SkillSet:
        if self._skills is None:
            return SkillSet()
        return self._skills.skills if isinstance(self._skills, SkillsLoader) else self._skills

    @property
    def problems(self) -> tuple[SkillProblem, ...]:
        """The SKILL.md problems of the current snapshot (a broken file, a name clash)."""
        return self._skill_set().problems

    def prompt_skills(self) -> list[McpPromptSkill]:
        """The prompt skills of every session, in session order."""
        sessions = self._sessions if self._sessions is not None else {}
        fresh: dict[str, tuple[PromptSession, object, list[McpPromptSkill]]] = {}
        for server, session in sessions.items():
            cached = self._prompts.get(server)
            if cached is not None and cached[0] is session and cached[1] is session.catalog:
                fresh[server] = cached
            else:
                fresh[server] = (session, session.catalog, prompt_skills(session))
        self._prompts = fresh
        return [skill for _, _, skills in fresh.values() for skill in skills]

    def invocable(self) -> list[AnySkill]:
        """Skills ``/use`` and ``/skills`` offer: user-invocable SKILL.md skills, prompts, then served skills."""
        return [*self._skill_set().invocable(), *self.prompt_skills(), *self._served()]

    def _served(self) -> tuple[McpServedSkill, ...]:
        return self.served.skills if self.served is not None else ()

    def get(self, name: str) -> AnySkill:
        """The skill or prompt skill called ``name``.

        Raises:
            SkillNotFound: Listing every name available.
            SkillParseError: A skill of that name failed to parse.
        """
        skills = self._skill_set()
        if name in skills:
            return skills.get(name)
        others: list[AnySkill] = [*self.prompt_skills(), *self._served()]
        prompts = {skill.name: skill for skill in others}
        if name in prompts:
            return prompts[name]
        raise skills.missing(name, [*skills.skills, *prompts])
