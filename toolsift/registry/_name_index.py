"""One namespace's tool names, indexed so a glob is tried only on names that can match it.

A glob's literal prefix, its literal suffix, its longest literal inside and,
when it has no ``*``, its length each bound the names it can match. The index
keeps the names sorted forwards, sorted reversed, grouped by length, and
joined in one text: prefix and suffix bounds are binary searches, an inside
literal is found by ``str.find`` (a C loop, not one Python step per name).
The narrowest bound is scanned with the glob's regular expression, so
``*_search`` or ``*memory1?_*`` over 10,000 names tries only a few of them.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable
from functools import lru_cache

from .._globs import PatternSet

__all__ = ["NameIndex"]

# Above every character a tool name may hold, so ``prefix + _TOP`` ends a prefix's range.
_TOP = "\U0010ffff"
# Pools this small are scanned as they are: finding an inside literal would cost more.
_SCAN_DIRECTLY = 16


@lru_cache(maxsize=4096)
def _bounds(pattern: str) -> tuple[str, str, str, int | None]:
    """The glob's literal prefix, literal suffix, longest literal between wildcards, and fixed length.

    The length is None when the glob has a ``*``.
    """
    chunks = re.split(r"[*?]", pattern)
    if len(chunks) == 1:
        return pattern, pattern, "", len(pattern)
    inside = max(chunks[1:-1], key=len, default="")
    return chunks[0], chunks[-1], inside, None if "*" in pattern else len(pattern)


class NameIndex:
    """The names of one namespace, sorted forwards, sorted reversed and grouped by length."""

    __slots__ = ("_backward", "_backward_names", "_by_length", "_forward", "_text")

    def __init__(self, names: Iterable[str]) -> None:
        self._forward = sorted(names)
        backward = sorted((name[::-1], name) for name in self._forward)
        self._backward = [reversed_name for reversed_name, _ in backward]
        self._backward_names = [name for _, name in backward]
        self._by_length: dict[int, list[str]] = {}
        for name in self._forward:
            self._by_length.setdefault(len(name), []).append(name)
        self._text = "\n".join(self._forward) + "\n"

    def matching(self, glob: PatternSet) -> list[str]:
        """The names a single-pattern set matches."""
        pattern = glob.patterns[0]
        prefix, suffix, inside, length = _bounds(pattern)
        # The narrowest pool so far, and whether its bound alone decides (``memory_*``, ``*_search``, ``*_mem*``).
        best, decided = self._forward, False
        if prefix:
            pool = self._starting(prefix)
            if len(pool) < len(best):
                best, decided = pool, pattern == prefix + "*"
        if suffix:
            pool = self._ending(suffix)
            if len(pool) < len(best):
                best, decided = pool, pattern == "*" + suffix
        if length is not None:
            pool = self._by_length.get(length, [])
            if len(pool) < len(best):
                best, decided = pool, False
        # Finding an inside literal walks every name that holds it: worth it only when no bound narrowed much.
        if inside and len(best) > max(_SCAN_DIRECTLY, len(self._forward) // 4):
            pool = self._containing(inside)
            if len(pool) < len(best):
                best, decided = pool, pattern == f"*{inside}*"
        return best if decided or not best else glob.filter(best)

    def _starting(self, prefix: str) -> list[str]:
        return self._forward[bisect_left(self._forward, prefix) : bisect_left(self._forward, prefix + _TOP)]

    def _ending(self, suffix: str) -> list[str]:
        reversed_suffix = suffix[::-1]
        low = bisect_left(self._backward, reversed_suffix)
        return self._backward_names[low : bisect_left(self._backward, reversed_suffix + _TOP)]

    def _containing(self, literal: str) -> list[str]:
        text, found = self._text, []
        start = text.find(literal)
        while start != -1:
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", start)
            found.append(text[line_start:line_end])
            start = text.find(literal, line_end)
        return found
