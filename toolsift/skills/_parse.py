"""Turning SKILL.md text into a :class:`Skill`, or into one precise error.

Every failure becomes a :class:`SkillParseError` naming the file, the field and
the line: broken YAML (the YAML error's line), a missing or mistyped field (the
field's line in the front matter), no usable id, a pattern that is not a valid
glob (the pattern's own line), and a templated body that does not compile or
reads an undeclared name (front matter lines plus the template's line). What
toolsift can work around (a display name, a long or missing description, Claude
Code tool names) loads with warnings instead; see ``_leniency``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from .._exceptions import InvalidPattern, SkillParseError, TemplateError
from ._frontmatter import FrontMatter, split_front_matter
from ._leniency import settle_description, settle_name, warnings_for
from ._model import Skill
from ._render import check_template
from ._sandbox import TemplateSandbox
from ._warning import SkillWarning

__all__ = ["parse_skill", "parse_skill_text", "read_skill_file"]

# Front-matter keys the model knows, canonical (hyphenated) spelling first. The
# underscore spelling is accepted too, so ``allowed_tools:`` restricts the turn
# instead of landing, unnoticed, in ``extra``.
_KNOWN_KEYS = {
    (info.alias or name): name
    for name, info in Skill.model_fields.items()
    if name not in {"extra", "body", "path", "display_name"}
}
_MAX_SHOWN = 80


def parse_skill(path: str | os.PathLike[str], *, sandbox: TemplateSandbox | None = None) -> Skill:
    """Read and parse one SKILL.md file.

    Args:
        path: The file; its folder's name is the skill's id when ``name`` is not one.
        sandbox: Where a templated body is compiled (the shared default when None).

    Raises:
        SkillParseError: When the file cannot be read or is not a valid skill.
    """
    file = Path(path)
    return parse_skill_text(read_skill_file(file), file, sandbox=sandbox)


def read_skill_file(file: Path) -> str:
    """The text of a SKILL.md.

    Raises:
        SkillParseError: When it cannot be read or is not UTF-8.
    """
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SkillParseError(f"the file is not valid UTF-8 ({exc.reason} at byte {exc.start})", path=file) from exc
    except OSError as exc:
        raise SkillParseError(f"cannot read the file: {exc.strerror or exc}", path=file) from exc


def parse_skill_text(
    text: str, path: str | os.PathLike[str] | None = None, *, sandbox: TemplateSandbox | None = None
) -> Skill:
    """Parse SKILL.md text.

    A templated body is compiled in ``sandbox``, which bounds the time and
    memory that takes; this call blocks for at most that budget.

    Args:
        text: The whole file: ``---``, YAML front matter, ``---``, markdown body.
        path: Where the text comes from, for messages. When given, its parent
            folder's name is the id of a skill whose ``name`` is missing or is a
            display name (the Agent Skills rule is that the two are equal).
        sandbox: Where a templated body is compiled (the shared default when
            None); the skill also renders in it.

    Returns:
        The skill, its templated body checked, with ``warnings`` listing what
        was worked around.

    Raises:
        SkillParseError: Naming the file, the field and the line of the first
            problem (the message lists the others).
    """
    file = Path(path) if path is not None else None
    parts = split_front_matter(text, file)
    fields, written = _sort_fields(parts, file)
    warnings: list[SkillWarning] = []
    settle_name(fields, parts, file, warnings)
    settle_description(fields, parts, file, warnings)
    try:
        skill = Skill.model_validate({**fields, "body": parts.body, "path": file})
    except ValidationError as exc:
        raise _from_validation(exc, parts, written, file) from exc
    if skill.templated:
        try:
            check_template(skill, sandbox)
        except TemplateError as exc:
            line = parts.body_line + (exc.line or 1) - 1
            raise SkillParseError(f"template error in the body: {exc.reason}", path=file, line=line) from exc
    skill._note_loading((*warnings, *warnings_for(skill, parts, written, file)), sandbox)
    return skill


def _sort_fields(parts: FrontMatter, path: Path | None) -> tuple[dict[str, Any], dict[str, str]]:
    """Split the front matter into known fields (by alias) and ``extra``.

    Returns:
        The fields for the model, and for each known alias the key as written.
    """
    fields: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    written: dict[str, str] = {}
    for key, value in parts.data.items():
        if not isinstance(key, str):
            raise SkillParseError(f"field names must be text, got {key!r}", path=path, line=parts.line_of(str(key)))
        alias = key.replace("_", "-")
        if alias not in _KNOWN_KEYS:
            extra[key] = value
            continue
        if alias in written:
            raise SkillParseError(
                f"{written[alias]!r} and {key!r} are the same field; keep one",
                path=path,
                field=alias,
                line=parts.line_of(key),
            )
        written[alias] = key
        fields[alias] = value
    fields["extra"] = extra
    return fields, written


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else f"{text[: _MAX_SHOWN - 3]}..."


def _problem(error: ErrorDetails, parts: FrontMatter, written: dict[str, str]) -> tuple[str, str, int | None]:
    """One pydantic error as (field as written, reason, line)."""
    head, *rest = error["loc"] or ("",)
    key = written.get(str(head), str(head))
    field = ".".join([key, *map(str, rest)])
    cause = error.get("ctx", {}).get("error")
    if error["type"] == "missing":
        # A body stands in for a missing description (see _leniency), so here there is none.
        empty = " and the body is empty: say what the skill does and when to use it" if key == "description" else ""
        return field, f"the front matter has no {key!r} field{empty}", 1
    if isinstance(cause, InvalidPattern):
        line = parts.line_containing(key, cause.pattern)
        return field, f"pattern {cause.pattern!r} is not a valid glob: {cause.reason}", line
    reason = str(cause) if isinstance(cause, Exception) else f"{error['msg']}; got {_shown(error['input'])}"
    return field, reason, parts.line_of(key, rest)


def _from_validation(
    exc: ValidationError, parts: FrontMatter, written: dict[str, str], path: Path | None
) -> SkillParseError:
    problems = [_problem(error, parts, written) for error in exc.errors(include_url=False)]
    field, reason, line = problems[0]
    others = "".join(
        f"; also {other_field!r}" + (f" (line {other_line})" if other_line else "") + f": {other_reason}"
        for other_field, other_reason, other_line in problems[1:]
    )
    return SkillParseError(reason + others, path=path, field=field, line=line)
