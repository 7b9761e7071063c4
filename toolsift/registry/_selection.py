"""Selecting a scope's tools from an index kept per namespace.

A scope's visible tools are the union, over namespaces, of what each namespace
shows under the scope's patterns, plus the tools the scope names (pinned,
unlocked). Each namespace's share is computed once per pattern set and kept
until that namespace changes, so swapping one server recomputes one share and
every other scope's selection is rebuilt by concatenating cached lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from itertools import pairwise
from operator import attrgetter
from typing import Any

from ._globs import PatternSet
from ._name_index import NameIndex
from ._names import namespace_of
from ._scope import TurnScope
from ._visibility import Entry, hidden_reason
from .formats import SchemaFormat

__all__ = ["SelectionIndex", "export_entry"]

# Per namespace: distinct pattern sets remembered before the oldest is dropped.
_PARTS_PER_NAMESPACE = 256

_ORDER = attrgetter("order")
_PatternKey = tuple[tuple[str, ...] | None, tuple[str, ...], tuple[str, ...], bool]


def export_entry(entry: Entry, fmt: SchemaFormat, strict: bool) -> dict[str, Any]:
    """The entry's declaration in ``fmt``, exported once per entry and format."""
    export = entry.exports.get((fmt.name, strict))
    if export is None:
        rule = fmt.name_rule
        name = entry.aliases.get(rule.key, entry.spec.name) if rule is not None else entry.spec.name
        export = entry.exports[(fmt.name, strict)] = fmt.export(entry.spec, name, strict=strict)
    return export


@dataclass(eq=False)
class _Share:
    """One namespace's visible entries under one pattern set, in registration order."""

    entries: list[Entry]
    exports: dict[tuple[str, bool], list[dict[str, Any]]] = field(default_factory=dict)

    def exported(self, fmt: SchemaFormat, strict: bool) -> list[dict[str, Any]]:
        key = (fmt.name, strict)
        schemas = self.exports.get(key)
        if schemas is None:
            schemas = self.exports[key] = [e.exports.get(key) or export_entry(e, fmt, strict) for e in self.entries]
        return schemas


def _pattern_key(scope: TurnScope) -> _PatternKey:
    agent = scope.agent_patterns
    return (agent.patterns if agent is not None else None, scope.skill_patterns.patterns,
            scope.disallowed_patterns.patterns, scope.read_only)


class SelectionIndex:
    """Per-namespace shares of every scope's selection, invalidated one namespace at a time.

    Args:
        by_namespace: The registry's entries by namespace, kept in registration
            order (an entry that changes is removed and added again at the end).
    """

    def __init__(self, by_namespace: Mapping[str | None, dict[str, Entry]]) -> None:
        self._by_namespace = by_namespace
        self._shares: dict[str | None, dict[_PatternKey, _Share]] = {}
        self._matches: dict[str | None, dict[str, list[Entry]]] = {}
        self._names: dict[str | None, NameIndex] = {}
        self._global_counts: dict[str | None, int] = {}

    def changed(self, added: Iterable[Entry], removed: Iterable[Entry]) -> None:
        """Forget the shares of every namespace ``added`` or ``removed`` touch."""
        for entry, step in [*((e, -1) for e in removed), *((e, 1) for e in added)]:
            for cache in (self._shares, self._matches, self._names):
                cache.pop(entry.namespace, None)
            if not entry.internal:
                count = self._global_counts.get(entry.namespace, 0) + step
                if count:
                    self._global_counts[entry.namespace] = count
                else:
                    del self._global_counts[entry.namespace]

    def select(self, scope: TurnScope, entries: Mapping[str, Entry]) -> tuple[list[_Share], list[Entry] | None]:
        """The scope's visible entries: as ordered shares, or as one sorted list when they interleave.

        Returns:
            ``(shares, None)`` when concatenating the shares gives registration
            order, else ``([], entries)`` with every visible entry sorted.
        """
        named = [entries[n] for n in (*scope.unlocked, *scope.pinned) if n in entries]
        plain = replace(scope, unlocked=frozenset(), pinned=frozenset()) if named else scope
        key = _pattern_key(plain)
        shares = [share for ns in self._namespaces(plain) if (share := self._share(ns, key, plain)).entries]
        shares.sort(key=lambda s: s.entries[0].order)
        # Named tools the patterns alone hide but the names surface or exempt.
        extra = {id(e): e for e in named if hidden_reason(e, plain) is not None and hidden_reason(e, scope) is None}
        ordered = all(a.entries[-1].order < b.entries[0].order for a, b in pairwise(shares))
        if ordered and not extra:
            return shares, None
        merged = [e for share in shares for e in share.entries] + list(extra.values())
        merged.sort(key=lambda e: e.order)
        return [], merged

    def _namespaces(self, scope: TurnScope) -> Iterable[str | None]:
        """Namespaces that can hold a tool visible by pattern (see ``_visibility`` for why)."""
        narrow = scope.skill_patterns or scope.agent_patterns
        if narrow is None:
            return self._global_counts.keys()
        named: dict[str | None, None] = {}
        scan_globals = False
        for prefix in narrow.prefixes:
            namespace = namespace_of(prefix)
            if namespace is None:
                scan_globals = True
            elif namespace in self._by_namespace:
                named[namespace] = None
        if scan_globals:
            named.update(dict.fromkeys(self._global_counts))
        return named.keys()

    def _share(self, namespace: str | None, key: _PatternKey, scope: TurnScope) -> _Share:
        shares = self._shares.setdefault(namespace, {})
        share = shares.get(key)
        if share is None:
            share = shares[key] = _Share(self._visible(namespace, scope))
            if len(shares) > _PARTS_PER_NAMESPACE:
                del shares[next(iter(shares))]
        return share

    def _visible(self, namespace: str | None, scope: TurnScope) -> list[Entry]:
        """The namespace's entries ``scope`` shows, in registration order."""
        # A tool matching the narrowest set is visible unless another check is in force.
        checked = scope.agent_patterns is not None or bool(scope.disallowed_patterns) or scope.read_only
        narrow = scope.skill_patterns or scope.agent_patterns
        if narrow is None:
            return [e for e in self._by_namespace.get(namespace, {}).values()
                    if (not e.internal and not checked) or hidden_reason(e, scope) is None]
        matched, surfaced = self._matching(namespace, narrow)
        if checked:
            return [e for e in matched if hidden_reason(e, scope) is None]
        # Unchecked, the narrow set is the skill's, and an internal tool needs a pattern naming its server.
        if self._global_counts.get(namespace) == len(self._by_namespace.get(namespace, ())):
            return matched  # no internal tool here
        return [e for e in matched if not e.internal or e.order in surfaced]

    def _matching(self, namespace: str | None, patterns: PatternSet) -> tuple[list[Entry], set[int]]:
        """Entries any pattern matches (in registration order), and the orders of those surfacing ones match."""
        grouped = patterns.parts_by_server
        named, bare = grouped.get(namespace, ()) if namespace is not None else (), grouped.get(None, ())
        lists = [self._matched(namespace, part, named=True) for part in named]
        surfaced = {e.order for hits in lists for e in hits}
        lists += [self._matched(namespace, part, named=False) for part in bare]
        if len(lists) == 1:
            return lists[0], surfaced
        by_order = {e.order: e for hits in lists for e in hits}
        return [by_order[order] for order in sorted(by_order)], surfaced

    def _matched(self, namespace: str | None, glob: PatternSet, *, named: bool) -> list[Entry]:
        """The namespace's entries one glob matches, kept until the namespace changes.

        A glob naming the namespace is tried on its names directly; the name
        index pays off for bare globs, which are tried on every global namespace.
        """
        matches = self._matches.setdefault(namespace, {})
        pattern = glob.patterns[0]
        hits = matches.get(pattern)
        if hits is None:
            entries = self._by_namespace.get(namespace, {})
            index = self._names.get(namespace)
            if index is None and not named:
                index = self._names[namespace] = NameIndex(entries)
            if index is None:
                hits = [entries[name] for name in glob.filter(entries)]
            else:
                hits = sorted((entries[name] for name in index.matching(glob)), key=_ORDER)
            matches[pattern] = hits
            if len(matches) > _PARTS_PER_NAMESPACE:
                del matches[next(iter(matches))]
        return hits
