"""What a scan of the skill folders produces: skills, problems, and what changed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import final

from .._exceptions import SkillError, SkillNotFound, SkillParseError
from ._model import Skill
from ._warning import SkillWarning

__all__ = ["SkillProblem", "SkillSet", "SkillsReloaded"]


@final
@dataclass(frozen=True)
class SkillProblem:
    """A skill that could not be loaded, or loaded but was not used.

    Attributes:
        path: The SKILL.md (or folder) at fault.
        message: What went wrong, naming the file, and the field and line where known.
        exception: The error behind it; None for a name clash.
        shadowed_by: For a name clash, the SKILL.md that won (earlier in precedence).
    """

    path: Path
    message: str
    exception: SkillError | None = field(default=None, compare=False)
    shadowed_by: Path | None = None

    @property
    def field(self) -> str | None:
        """The front-matter field at fault, when known."""
        return self.exception.field if isinstance(self.exception, SkillParseError) else None

    @property
    def line(self) -> int | None:
        """The line in ``path`` at fault, when known."""
        return self.exception.line if isinstance(self.exception, SkillParseError) else None

    @property
    def reason(self) -> str:
        """The message without the place it starts with, for a report that shows ``path`` and ``line`` apart."""
        return self.message.removeprefix(f"{self.path}:{self.line}: " if self.line else f"{self.path}: ")


@final
@dataclass(frozen=True)
class SkillSet:
    """An immutable snapshot of the loaded skills.

    Attributes:
        skills: Skills by name, in discovery order (folders in precedence order,
            then by folder name).
        problems: Everything that went wrong during the scan.
    """

    skills: Mapping[str, Skill] = field(default_factory=dict)
    problems: tuple[SkillProblem, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "skills", MappingProxyType(dict(self.skills)))

    def get(self, name: str) -> Skill:
        """The skill called ``name``.

        Raises:
            SkillNotFound: Listing the skills that are loaded.
            SkillParseError: The SKILL.md of a folder called ``name`` failed to parse.
        """
        try:
            return self.skills[name]
        except KeyError:
            raise self.missing(name, list(self.skills)) from None

    def missing(self, name: str, available: Sequence[str]) -> SkillError:
        """The error for a lookup of ``name`` that found no skill.

        A SKILL.md in a folder called ``name`` that failed to parse is that
        skill: its parse error (file, line) says why it is not there, where
        "unknown skill" would send the reader looking for a typo.
        """
        for problem in self.problems:
            error = problem.exception
            if isinstance(error, SkillParseError) and problem.path.parent.name == name:
                reason = f"{error.reason}; skill {name!r} failed to parse, so it is not loaded until this is fixed"
                return SkillParseError(reason, path=error.path, field=error.field, line=error.line)
        return SkillNotFound(name, available)

    def invocable(self) -> list[Skill]:
        """The skills ``/use`` and ``/skills`` offer (``user-invocable`` is true)."""
        return [skill for skill in self.skills.values() if skill.user_invocable]

    @property
    def warnings(self) -> tuple[SkillWarning, ...]:
        """What was worked around to load the skills, skill by skill (see ``Skill.warnings``)."""
        return tuple(warning for skill in self.skills.values() for warning in skill.warnings)

    def __contains__(self, name: object) -> bool:
        return name in self.skills

    def __iter__(self) -> Iterator[Skill]:
        return iter(self.skills.values())

    def __len__(self) -> int:
        return len(self.skills)


@final
@dataclass(frozen=True)
class SkillsReloaded:
    """Sent to subscribers after a reload that changed skills or problems.

    Attributes:
        skills: The new snapshot.
        added: Names that were not loaded before.
        changed: Names whose SKILL.md (text or file) changed.
        removed: Names no longer loaded.
        problems_changed: Whether the problem list differs from the previous scan
            (a skill broke, was fixed, or a clash appeared or went away).
    """

    skills: SkillSet
    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    problems_changed: bool = False

    @property
    def problems(self) -> tuple[SkillProblem, ...]:
        """The problems of the new snapshot."""
        return self.skills.problems

    def __bool__(self) -> bool:
        """True when anything changed."""
        return bool(self.added or self.changed or self.removed or self.problems_changed)
