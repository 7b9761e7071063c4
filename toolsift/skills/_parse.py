"""Turning SKILL.md text into a :class:`Skill`, or into one precise error.

Every failure becomes a :class:`SkillParseError` naming the file, the field and
the line: broken YAML (the YAML error's line), a missing or mistyped field (the
field's line in the front matter), a name that is not its folder's, a pattern
that is not a valid glob (the pattern's own line), and a body that does not
compile (front matter lines plus the template's line).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jinja2 import TemplateSyntaxError
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from .._exceptions import InvalidPattern, SkillParseError
from ._frontmatter import FrontMatter, split_front_matter
from ._model import Skill

__all__ = ["parse_skill", "parse_skill_text", "read_skill_file"]

# Front-matter keys the model knows, canonical (hyphenated) spelling first. The
# underscore spelling is accepted too, so ``allowed_tools:`` restricts the turn
# instead of landing, unnoticed, in ``extra``.
_KNOWN_KEYS = {
    (info.alias or name): name for name, info in Skill.model_fields.items() if name not in {"extra", "body", "path"}
}
_MAX_SHOWN = 80


def parse_skill(path: str | os.PathLike[str]) -> Skill:
    """Read and parse one SKILL.md file.

    Args:
        path: The file; its folder's name must equal the skill's ``name``.

    Raises:
        SkillParseError: When the file cannot be read or is not a valid skill.
    """
    file = Path(path)
    return parse_skill_text(read_skill_file(file), file)


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


def parse_skill_text(text: str, path: str | os.PathLike[str] | None = None) -> Skill:
    """Parse SKILL.md text.

    Args:
        text: The whole file: ``---``, YAML front matter, ``---``, markdown body.
        path: Where the text comes from, for messages. When given, its parent
            folder's name must equal the skill's ``name`` (Agent Skills rule).

    Returns:
        The skill, its body already compiled.

    Raises:
        SkillParseError: Naming the file, the field and the line of the first
            problem (the message lists the others).
    """
    file = Path(path) if path is not None else None
    parts = split_front_matter(text, file)
    fields, written = _sort_fields(parts, file)
    try:
        skill = Skill.model_validate({**fields, "body": parts.body, "path": file})
    except ValidationError as exc:
        raise _from_validation(exc, parts, written, file) from exc
    folder = file.parent.name if file is not None else ""
    if folder and folder != skill.name:
        raise SkillParseError(
            f"name {skill.name!r} must equal its folder's name {folder!r}; rename one of them",
            path=file,
            field="name",
            line=parts.line_of("name"),
        )
    try:
        _ = skill.template
    except TemplateSyntaxError as exc:
        line = parts.body_line + (exc.lineno or 1) - 1
        raise SkillParseError(f"template error in the body: {exc.message}", path=file, line=line) from exc
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
        return field, f"the front matter has no {key!r} field", 1
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
