"""What a SKILL.md may get wrong and still load, and the warning that says so.

Published skills break the Agent Skills rules in ways that do not stop them from
working: a display name (``Pair Programming``) where the id belongs, a name that
is not its folder's, a description over 1,024 characters (Anthropic's own
``claude-api`` skill), no description at all (Claude Code then uses the body's
first paragraph), Claude Code tool names in ``allowed-tools``. Refusing them
would drop skills people use, so each loads with a :class:`SkillWarning` naming
the file, field and line. Refused are only skills that cannot work: no usable id
(neither the name nor the folder is one), neither a description nor a body,
invalid YAML, invalid patterns (the model and the parser report those).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .._exceptions import SkillParseError
from ._claude_tools import foreign_reason
from ._frontmatter import FrontMatter
from ._model import Skill, is_skill_name
from ._warning import SkillWarning

__all__ = ["settle_description", "settle_name", "warnings_for"]

_LIMITS = (("description", 1024), ("compatibility", 500))
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_SHOWN = 60
_ID = "1-64 lowercase letters, digits and single hyphens"


def settle_name(fields: dict[str, Any], parts: FrontMatter, path: Path | None, warnings: list[SkillWarning]) -> None:
    """Pick the skill's id: the ``name`` when it is one, else the folder's name (keeping a display name).

    Raises:
        SkillParseError: When the name is text but neither it nor the folder's name is an id.
    """
    folder = path.parent.name if path is not None else ""
    written = fields.get("name")
    line = parts.line_of("name")
    if written is None:
        if is_skill_name(folder):
            fields["name"] = folder
            warnings.append(
                SkillWarning(
                    path, f"the front matter has no 'name'; the skill is called {folder!r} after its folder", "name"
                )
            )
    elif is_skill_name(written):
        if folder and folder != written:
            warnings.append(
                SkillWarning(
                    path,
                    f"name {written!r} differs from its folder's name {folder!r} (Agent "
                    f"Skills wants them equal); the skill is called {written!r}",
                    "name",
                    line,
                )
            )
    elif isinstance(written, str) and is_skill_name(folder):
        fields["name"], fields["display_name"] = folder, written
        warnings.append(
            SkillWarning(
                path,
                f"{written!r} is a display name, not an id ({_ID}); the skill is called "
                f"{folder!r} after its folder and keeps the display name for listings",
                "name",
                line,
            )
        )
    elif isinstance(written, str) and folder:
        raise SkillParseError(
            f"{written!r} is not a skill id and neither is its folder's name {folder!r}: rename "
            f"the folder to an id ({_ID}); the name may stay as a display name",
            path=path,
            field="name",
            line=line,
        )


def settle_description(
    fields: dict[str, Any], parts: FrontMatter, path: Path | None, warnings: list[SkillWarning]
) -> None:
    """Use the body's first paragraph when the description is missing or blank, as Claude Code does.

    With no body either, nothing says what the skill is for: ``fields`` is left
    alone and the model reports the description.
    """
    written = fields.get("description")
    summary = _first_paragraph(parts.body)
    if (written is not None and not (isinstance(written, str) and not written.strip())) or not summary:
        return
    line = parts.line_of("description")
    fields["description"] = summary
    shown = summary if len(summary) <= _SHOWN else f"{summary[: _SHOWN - 3]}..."
    warnings.append(
        SkillWarning(path, f"no description; using the body's first paragraph ({shown!r})", "description", line)
    )


def warnings_for(skill: Skill, parts: FrontMatter, written: dict[str, str], path: Path | None) -> list[SkillWarning]:
    """Warnings about a validated skill: the Agent Skills length limits, and tool entries naming no toolsift tool.

    Args:
        written: For each known field, its key as written in the front matter.
    """
    warnings = []
    for field, limit in _LIMITS:
        value = getattr(skill, field)
        if value is not None and len(value) > limit and field in written:
            warnings.append(
                SkillWarning(
                    path,
                    f"{len(value):,} characters, over the {limit:,} Agent Skills allows; "
                    "kept whole (other clients may cut or refuse it)",
                    written[field],
                    parts.line_of(written[field]),
                )
            )
    for field, entries in (("allowed-tools", skill.allowed_tools), ("disallowed-tools", skill.disallowed_tools)):
        key = written.get(field, field)
        foreign = [entry for entry in entries if foreign_reason(entry) is not None]
        for entry in foreign:
            warnings.append(
                SkillWarning(
                    path,
                    f"{entry!r} {foreign_reason(entry)}, which toolsift does not have; kept, it matches no tool",
                    key,
                    parts.line_containing(key, entry),
                )
            )
        if field == "allowed-tools" and foreign and len(foreign) == len(entries):
            warnings.append(
                SkillWarning(
                    path,
                    "no entry names a toolsift tool, so turns with this skill offer no "
                    "tools (here allowed-tools restricts what the model sees; Claude Code only "
                    "pre-approves); add toolsift patterns or remove the field",
                    key,
                    parts.line_of(key),
                )
            )
    return warnings


def _first_paragraph(body: str) -> str:
    """The body's first paragraph of prose (a heading when there is nothing else), on one line."""
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(body) if p.strip()]
    prose = [p for p in paragraphs if not p.startswith("#")]
    chosen = prose[0] if prose else paragraphs[0].lstrip("#").strip() if paragraphs else ""
    return " ".join(chosen.split())
