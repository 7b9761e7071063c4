"""Line numbers of the keys and items of a JSON document.

``json`` gives positions for syntax errors only. To point a validation error
at ``tools.mcpServers.git.timeout`` on line 12, this module walks the (already
valid) text once and records the line of every object key and array item by
its path. It is written by hand because no maintained library returns source
positions for plain JSON, and the walk is a few dozen lines over text that
``json.loads`` has already accepted.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from json import JSONDecoder

__all__ = ["MAX_DEPTH", "JsonLines", "Loc", "too_deep"]

#: Deepest nesting of objects and arrays a config file may have; real ones stay under ten.
MAX_DEPTH = 64
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')

Loc = tuple[str | int, ...]

_SPACE = re.compile(r"[ \t\n\r]*")
# raw_decode reads one value at a position and says where it ends: strings and scalars.
_DECODER = JSONDecoder()


def too_deep(text: str) -> int | None:
    """The line where ``text`` first nests deeper than :data:`MAX_DEPTH`, or None.

    Checked before parsing: ``json.loads``, validation and the line scan all
    recurse, and a file nested 100,000 levels deep would overflow them.
    """
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        char = match.group()
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return text.count("\n", 0, match.start()) + 1
        elif char in "]}":
            depth -= 1
    return None


@dataclass
class JsonLines:
    """Where each key and item of a JSON text sits.

    Attributes:
        lines: 1-based line of each path (a key's line for object members).
        duplicates: Paths whose key appears more than once in its object, with
            the line of each repeat (JSON keeps the last one).
    """

    lines: dict[Loc, int] = field(default_factory=dict)
    duplicates: list[tuple[Loc, int]] = field(default_factory=list)

    @classmethod
    def scan(cls, text: str) -> JsonLines:
        """Index ``text``, which must be valid JSON."""
        index = cls()
        _Walker(text, index).value(_skip(text, 0), ())
        return index

    def line_of(self, loc: Sequence[str | int]) -> int | None:
        """The line of ``loc``, or of its nearest ancestor found in the text."""
        path = tuple(loc)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return None


def _skip(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    return match.end() if match else pos


class _Walker:
    def __init__(self, text: str, index: JsonLines) -> None:
        self.text = text
        self.index = index
        self.starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def line(self, pos: int) -> int:
        return bisect.bisect_right(self.starts, pos)

    def value(self, pos: int, path: Loc) -> int:
        char = self.text[pos]
        if char == "{":
            return self.members(pos + 1, path)
        if char == "[":
            return self.items(pos + 1, path)
        return _DECODER.raw_decode(self.text, pos)[1]

    def members(self, pos: int, path: Loc) -> int:
        pos = _skip(self.text, pos)
        seen: set[str] = set()
        while self.text[pos] != "}":
            line = self.line(pos)
            decoded, pos = _DECODER.raw_decode(self.text, pos)
            key = str(decoded)
            child = (*path, key)
            if key in seen:
                self.index.duplicates.append((child, line))
            seen.add(key)
            self.index.lines[child] = line
            pos = _skip(self.text, pos)  # at ':'
            pos = self.value(_skip(self.text, pos + 1), child)
            pos = _skip(self.text, pos)
            if self.text[pos] == ",":
                pos = _skip(self.text, pos + 1)
        return pos + 1

    def items(self, pos: int, path: Loc) -> int:
        pos = _skip(self.text, pos)
        number = 0
        while self.text[pos] != "]":
            child = (*path, number)
            self.index.lines[child] = self.line(pos)
            pos = _skip(self.text, self.value(pos, child))
            if self.text[pos] == ",":
                pos = _skip(self.text, pos + 1)
            number += 1
        return pos + 1
