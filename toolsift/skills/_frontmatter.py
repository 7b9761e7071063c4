"""Splitting a SKILL.md into YAML front matter and body, keeping line numbers.

``frontmatter.parse`` strips the text before splitting (so every line number
after a leading blank line would be off), returns an empty mapping when the
front matter is missing or is not a mapping, and keeps the last of two equal
keys. A skill deserves a precise message in each of those cases, so this module
uses python-frontmatter's YAML handler (its boundary pattern and its loader)
and does the bookkeeping itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from .._exceptions import SkillParseError

try:  # libyaml's parser is several times faster; the constructor (and the check below) stays Python
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

__all__ = ["FrontMatter", "split_front_matter"]

_HANDLER = YAMLHandler()
_LEADING_BLANK_LINES = re.compile(r"(?:[ \t]*\n)*")


class _UniqueKeyLoader(_SafeLoader):
    """SafeLoader that refuses a mapping key written twice.

    PyYAML keeps the last value silently; two ``allowed-tools`` keys would then
    widen or narrow a skill's scope without anyone noticing.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, str) and key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"key {key!r} appears twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


@dataclass(frozen=True)
class FrontMatter:
    """A SKILL.md split into its parts.

    Attributes:
        data: The front matter, a mapping.
        lines: The front matter's text, line by line; ``lines[i]`` is on file
            line ``first_line + i``.
        first_line: File line of ``lines[0]`` (the opening ``---`` line).
        body: The body, without leading blank lines and trailing whitespace.
        body_line: File line where the body starts.
    """

    data: dict[str, Any]
    lines: tuple[str, ...]
    first_line: int
    body: str
    body_line: int

    def line_of(self, key: str, parts: Iterable[object] = ()) -> int | None:
        """The file line of a top-level key, refined by nested keys where they can be found."""
        index = self._find(re.compile(rf"{re.escape(key)}\s*:"), 0)
        if index is None:
            return None
        for part in parts:
            if not isinstance(part, str):
                continue
            found = self._find(re.compile(rf"\s*(?:-\s*)?{re.escape(part)}\s*(?::|$)"), index + 1)
            if found is None:
                break
            index = found
        return self.first_line + index

    def line_containing(self, key: str, text: str) -> int | None:
        """The first line at or after ``key`` that contains ``text``; the key's line if none does."""
        start = self.line_of(key)
        if start is None:
            return None
        for index in range(start - self.first_line, len(self.lines)):
            if text in self.lines[index]:
                return self.first_line + index
        return start

    def _find(self, pattern: re.Pattern[str], start: int) -> int | None:
        for index in range(start, len(self.lines)):
            if pattern.match(self.lines[index]):
                return index
        return None


def _line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def split_front_matter(text: str, path: Path | None) -> FrontMatter:
    """Split SKILL.md text into front matter and body.

    Raises:
        SkillParseError: When there is no front matter block, it is never closed,
            its YAML is invalid (with the YAML error's line) or it is not a mapping.
    """
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    boundaries = _HANDLER.FM_BOUNDARY.finditer(text)
    opening = next(boundaries, None)
    if opening is None or opening.start() != 0:
        raise SkillParseError(
            "a SKILL.md must start with a YAML front matter block between '---' lines", path=path, line=1
        )
    closing = next(boundaries, None)
    if closing is None:
        raise SkillParseError("the front matter opened on line 1 is never closed with '---'", path=path, line=1)
    source = text[opening.end() : closing.start()]
    first_line = _line_at(text, opening.end())
    try:
        data = _HANDLER.load(source, Loader=_UniqueKeyLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = first_line + mark.line if mark is not None else None
        detail = f"{exc.context}, {exc.problem}" if exc.context else str(exc.problem)
        if "alias" in detail:
            # YAML reads a leading '*' as an alias: `allowed-tools: *_search` fails here.
            detail += "; a value starting with '*' must be quoted ('*_search')"
        raise SkillParseError(f"invalid YAML in the front matter: {detail}", path=path, line=line) from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SkillParseError(
            f"the front matter must be a mapping of fields, got {type(data).__name__}", path=path, line=first_line
        )
    rest = text[closing.end() :]
    body = _LEADING_BLANK_LINES.sub("", rest, count=1)
    skipped = rest[: len(rest) - len(body)].count("\n")
    return FrontMatter(
        data=data,
        lines=tuple(source.split("\n")),
        first_line=first_line,
        body=body.rstrip(),
        body_line=_line_at(text, closing.end()) + skipped,
    )
