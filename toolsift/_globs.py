"""Tool-name globs: ``*`` and ``?`` only, whole-name, case-sensitive.

``fnmatch`` is not used: it treats ``[...]`` as character classes, normalises
case on some platforms and matches one pattern at a time. A pattern set here is
compiled once into a single anchored regular expression and cached, so a turn's
scope costs one ``fullmatch`` per candidate name whatever the number of patterns.

A parenthesised group may hold spaces and brackets (``Bash(git add:*)``, Claude
Code's permission-rule form). Tool names never contain parentheses, so such a
pattern is valid and matches no tool: a skill written for Claude Code keeps the
entry as written instead of being refused, and its scope is not widened.

Shared by the registry, config, skills, sessions, the pipeline and serving (a root
module: every package may import it; none of it is public).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from ._exceptions import InvalidPattern

__all__ = ["PatternSet", "compile_patterns", "literal_server", "validate_pattern"]

# Characters users reach for expecting shell-glob features toolsift does not have;
# refusing them beats silently matching them literally.
_FORBIDDEN = {"[": "character classes", "]": "character classes", "{": "brace expansion", "}": "brace expansion"}
_GROUP = re.compile(r"\([^()]*\)")
# What may not stand outside a parenthesised group: the refused characters, and spaces.
_OUTSIDE_GROUPS = re.compile(r"[\[\]{}\s]")
SERVER_SEPARATOR = "__"


def validate_pattern(pattern: object, *, where: str | None = None) -> str:
    """Check one glob and return it.

    Args:
        pattern: The candidate pattern.
        where: Where it came from, for the message (``"skill 'code-assist' allowed-tools"``).

    Raises:
        InvalidPattern: When it is not a non-empty string of printable characters,
            or uses a space or ``[ ] { }`` outside a parenthesised group.
    """
    if not isinstance(pattern, str):
        raise InvalidPattern(repr(pattern), f"expected a string, got {type(pattern).__name__}", where=where)
    if not pattern:
        raise InvalidPattern(pattern, "it is empty", where=where)
    bad: str | None = None
    if not pattern.isprintable():
        bad = next(char for char in pattern if not char.isprintable())
    elif (found := _OUTSIDE_GROUPS.search(_GROUP.sub("", pattern) if "(" in pattern else pattern)) is not None:
        bad = found.group()
        if bad in _FORBIDDEN:
            raise InvalidPattern(
                pattern, f"{bad!r} ({_FORBIDDEN[bad]}) is not supported; use only '*' and '?'", where=where
            )
    if bad is not None:
        raise InvalidPattern(pattern, f"it contains the non-printable or space character {bad!r}", where=where)
    return pattern


def literal_server(pattern: str) -> str | None:
    """Return the server a pattern names literally, or None.

    A pattern names server ``S`` when it starts with ``S__`` and has no wildcard
    before that first ``__``. Only such patterns surface an internal server's tools.
    """
    head, sep, _ = pattern.partition(SERVER_SEPARATOR)
    if not sep or not head or "*" in head or "?" in head:
        return None
    return head


def literal_prefix(pattern: str) -> str:
    """Return the part of a pattern before its first wildcard."""
    for index, char in enumerate(pattern):
        if char in "*?":
            return pattern[:index]
    return pattern


def _to_regex(pattern: str) -> str:
    parts: list[str] = []
    for char in pattern:
        if char == "*":
            parts.append(".*")
        elif char == "?":
            parts.append(".")
        else:
            parts.append(re.escape(char))
    return "".join(parts)


def _union(patterns: Iterable[str]) -> re.Pattern[str]:
    """One anchored-by-fullmatch regex for a set of globs; an empty set matches nothing."""
    body = "|".join(f"(?:{_to_regex(p)})" for p in patterns) or "(?!)"
    return re.compile(body, re.DOTALL)


def _regex_matcher(patterns: Iterable[str]) -> Callable[[str], bool]:
    fullmatch = _union(patterns).fullmatch
    return lambda name: fullmatch(name) is not None


def _simple_matcher(pattern: str) -> Callable[[str], bool]:
    """String tests for a glob with no ``?`` and at most one ``*``: compiling a regex costs more than using one.

    Globs with more wildcards get a regex: it is compiled once, and a bare glob
    is tried on many names, where a compiled match is the faster test.
    """
    if "?" in pattern or pattern.count("*") > 1:
        return _regex_matcher([pattern])
    head, star, tail = pattern.partition("*")
    if not star:
        return pattern.__eq__
    if not tail:
        return lambda name: name.startswith(head)
    if not head:
        return lambda name: name.endswith(tail)
    shortest = len(head) + len(tail)
    return lambda name: len(name) >= shortest and name.startswith(head) and name.endswith(tail)


@dataclass(frozen=True, eq=False)
class PatternSet:
    """An immutable set of globs; build it with :func:`compile_patterns`.

    Its regular expressions are compiled on first use: listing a scope works
    pattern by pattern (see :attr:`parts`), so a new pattern set that is only
    listed never pays for compiling its union.

    Attributes:
        patterns: The globs, in the order given, duplicates removed.
        servers: Servers the set names literally (see :func:`literal_server`).
        prefixes: Each pattern's literal prefix, for candidate lookups by prefix.
    """

    patterns: tuple[str, ...]
    servers: frozenset[str] = field(init=False)
    prefixes: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        servers = {s for s in map(literal_server, self.patterns) if s is not None}
        object.__setattr__(self, "servers", frozenset(servers))
        object.__setattr__(self, "prefixes", tuple(literal_prefix(p) for p in self.patterns))

    @cached_property
    def parts(self) -> tuple[PatternSet, ...]:
        """One single-pattern set per pattern (shared through the compile cache)."""
        return (self,) if len(self.patterns) == 1 else tuple(_compile((p,)) for p in self.patterns)

    @cached_property
    def parts_by_server(self) -> dict[str | None, tuple[PatternSet, ...]]:
        """The parts grouped by the server they name literally; bare ones under None."""
        grouped: dict[str | None, list[PatternSet]] = {}
        for part in self.parts:
            grouped.setdefault(literal_server(part.patterns[0]), []).append(part)
        return {server: tuple(parts) for server, parts in grouped.items()}

    @cached_property
    def _match(self) -> Callable[[str], bool]:
        return _simple_matcher(self.patterns[0]) if len(self.patterns) == 1 else _regex_matcher(self.patterns)

    @cached_property
    def _surfacing(self) -> re.Pattern[str]:
        return _union(p for p in self.patterns if literal_server(p) is not None)

    def matches(self, name: str) -> bool:
        """Return True when any pattern matches the whole name."""
        return self._match(name)

    def surfaces(self, name: str) -> bool:
        """Return True when a pattern that names a server literally matches the whole name.

        Only these patterns reach an internal server's tools: ``cf__memory_*``
        surfaces ``cf__memory_store``, while ``*`` or ``*_search`` in the same
        set match it without surfacing it. A name a literal pattern matches
        belongs to that pattern's server, since both split on their first ``__``.
        """
        return self._surfacing.fullmatch(name) is not None

    def filter(self, names: Iterable[str]) -> list[str]:
        """Return the names that match, in their order."""
        match = self._match
        return [n for n in names if match(n)]

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def __len__(self) -> int:
        return len(self.patterns)


@lru_cache(maxsize=4096)
def _compile(patterns: tuple[str, ...]) -> PatternSet:
    return PatternSet(patterns)


def compile_patterns(patterns: Iterable[str], *, where: str | None = None) -> PatternSet:
    """Validate and compile globs into one cached matcher.

    Equal pattern tuples return the same ``PatternSet`` object, so compiling a
    skill's or an agent's patterns on every turn costs a dictionary lookup.

    Raises:
        InvalidPattern: When any pattern is invalid (the message names it and ``where``).
    """
    if isinstance(patterns, str):
        patterns = [patterns]
    unique = tuple(dict.fromkeys(validate_pattern(p, where=where) for p in patterns))
    return _compile(unique)
