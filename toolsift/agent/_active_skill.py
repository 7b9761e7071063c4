"""The skill ``/use`` activated, looked up again in its source at every turn and call.

A conversation keeps only the skill's *name* and the ``/use`` argument text; the
grant (``allowed-tools``, ``disallowed-tools``) is read from the source each time
it is needed, so an edit to the SKILL.md applies at once and a removed skill's
tools stop at once. A skill that is gone, or whose SKILL.md no longer parses,
is dropped: the conversation goes on without a skill, and a notice says so.

A broken edit is not papered over here. The loader keeps the last good version
(so ``/skills`` still lists it and a half-saved file does not take it away from
other users), but running on it would mean running on a grant the file no
longer states; the active skill is dropped instead, and ``/use`` of it is refused
with the parse error until the file is fixed.

A skill that changed and still parses stays active with its new grant; its body
is rendered again with the same argument text at the next :meth:`refresh` (the
argument text is bound to its variables anew; if that fails, it is dropped).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, final

from .._exceptions import SkillError, SkillNotFound, SkillParseError
from ..skills import bind_arguments

__all__ = ["ActiveSkill", "SkillSource"]

logger = logging.getLogger("toolsift.agent")


class SkillSource(Protocol):
    """Where skills come from: a ``SkillsLoader``, a ``SkillSet``, a ``SkillCatalog``, or anything alike.

    A source that also has ``problems`` (a sequence of ``SkillProblem``, as the
    loader, the skill set and the catalog have) lets the conversation tell a
    skill whose SKILL.md is broken from one that is fine.
    """

    def get(self, name: str) -> Any:
        """Return the skill called ``name`` or raise ``SkillNotFound``."""
        ...

    def invocable(self) -> Sequence[Any]:
        """The skills ``/use`` and ``/skills`` offer."""
        ...


@dataclass(frozen=True)
class _Binding:
    skill: Any  # the version the instructions were rendered from
    arguments: str
    instructions: str


async def _render(skill: Any, arguments: str, note: Callable[[Any], str] | None = None) -> str:
    rendered = skill.render(bind_arguments(skill, arguments))
    if inspect.isawaitable(rendered):  # prompt skills ask their server
        rendered = await rendered
    prefix = note(skill) if note is not None else ""
    return f"{prefix}\n\n{rendered}" if prefix else str(rendered)


@final
class ActiveSkill:
    """The active skill of one conversation, and the notices its drops produce.

    Args:
        source: Where skills are looked up; None means no skills.
        note: Put before a skill's rendered body (where the skill lives and its bundled files); '' for none.
    """

    def __init__(self, source: SkillSource | None, note: Callable[[Any], str] | None = None) -> None:
        self.source = source
        self._note = note
        self._binding: _Binding | None = None
        self._notices: list[str] = []
        self.dropped_why = ""  # why the last skill was dropped ('' after /use or /unuse)

    def lookup(self, name: str) -> Any:
        """The skill called ``name`` as its source holds it now.

        Raises:
            SkillNotFound: No such skill (or no source).
            SkillParseError: Its SKILL.md is broken now (the source may still hold
                its last good version).
        """
        if self.source is None:
            raise SkillNotFound(name)
        skill = self.source.get(name)
        path = getattr(skill, "path", None)
        for problem in getattr(self.source, "problems", ()) if path is not None else ():
            error = problem.exception
            if problem.path == path and isinstance(error, SkillParseError):
                raise SkillParseError(error.reason, path=error.path, field=error.field, line=error.line)
        return skill

    async def activate(self, name: str, arguments: str) -> Any:
        """Make ``name`` the active skill, its body rendered with ``arguments``; returns the skill.

        Raises:
            SkillNotFound: No such skill, or it is not user-invocable.
            SkillParseError: Its SKILL.md is broken.
            SkillArgumentError: The arguments do not fit its variables.
            SkillRenderError: Its body failed to render.
        """
        skill = self.lookup(name)
        if not skill.user_invocable:
            available = [s.name for s in self.source.invocable()] if self.source is not None else []
            raise SkillNotFound(name, available)
        self._binding = _Binding(skill, arguments, await _render(skill, arguments, self._note))
        self.dropped_why = ""
        return skill

    def deactivate(self) -> str | None:
        """Deactivate the skill; returns its name, or None when none was active."""
        binding, self._binding = self._binding, None
        self.dropped_why = ""
        return binding.skill.name if binding is not None else None

    def current(self) -> Any | None:
        """The active skill as its source holds it now, or None; a gone or broken one is dropped here."""
        binding = self._binding
        if binding is None:
            return None
        name = binding.skill.name
        try:
            return self.lookup(name)
        except SkillNotFound:
            self._drop(name, "it is no longer loaded (removed or renamed)")
        except SkillParseError as exc:
            self._drop(name, f"its SKILL.md no longer parses: {exc}")
        return None

    @property
    def instructions(self) -> str:
        """The active skill's rendered body ('' without a skill), as of the last render."""
        return self._binding.instructions if self._binding is not None else ""

    async def refresh(self) -> None:
        """Drop the skill if it is gone or broken; render its body again if its SKILL.md changed.

        If cancelled while a prompt skill's server renders, the old instructions stay.
        """
        binding = self._binding
        skill = self.current()
        if binding is None or skill is None or skill is binding.skill:
            return
        try:
            instructions = await _render(skill, binding.arguments, self._note)
        except SkillError as exc:
            if self._binding is binding:
                self._drop(skill.name, f"it changed and no longer renders with {binding.arguments!r}: {exc}")
            return
        if self._binding is binding:  # not replaced by a /use while the render ran
            self._binding = _Binding(skill, binding.arguments, instructions)
            logger.info("Skill %r changed; its new body and allowed tools apply", skill.name)

    def take_notices(self) -> list[str]:
        """The notices since the last call, oldest first (each is said once)."""
        notices, self._notices = self._notices, []
        return notices

    def _drop(self, name: str, why: str) -> None:
        self._binding = None
        self.dropped_why = why
        notice = f"Skill {name!r} is no longer active: {why}. The conversation goes on without a skill."
        logger.warning("%s", notice)
        self._notices.append(notice)
