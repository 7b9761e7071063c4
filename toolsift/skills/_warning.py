"""A problem a SKILL.md has that toolsift works around: the skill loads, and the warning says how."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import final

__all__ = ["SkillWarning"]


@final
@dataclass(frozen=True)
class SkillWarning:
    """Something a SKILL.md gets wrong or leaves out that does not stop it from loading.

    Attributes:
        path: The SKILL.md, when the skill came from a file.
        reason: What was found and what toolsift does about it.
        field: The front-matter field concerned, when there is one.
        line: The line in ``path``, where it can be known.
    """

    path: Path | None
    reason: str
    field: str | None = None
    line: int | None = None

    @property
    def message(self) -> str:
        """The warning as one line, naming the file, line and field like a ``SkillParseError``."""
        where = "" if self.path is None else f"{self.path}:{self.line}: " if self.line else f"{self.path}: "
        return where + (f"field {self.field!r}: " if self.field else "") + self.reason

    def __str__(self) -> str:
        return self.message
