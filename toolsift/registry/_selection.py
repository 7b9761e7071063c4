"""Selecting a scope's tools from an index kept per namespace.

A scope's visible tools are the union, over namespaces, of what each namespace
shows under the scope's patterns, plus the tools the scope names (pinned,
unlocked). Each namespace's share is computed once per pattern set and kept
until that namespace changes, so swapping one server recomputes one share and
every other scope's selection is rebuilt by concatenating cached lists.

A glob that names no server is tried on every namespace holding a global
tool, on the names of global tools only (a bare glob never surfaces an internal
one). When many namespaces have not seen it yet, it is matched once on one
index of every global tool's name and the hits are shared out, instead of once
per namespace: a skill never seen before costs five lookups, not two hundred
and fifty. That joint index is rebuilt after a global tool changes, only when a
new glob next needs it.

Declarations are exported once per entry and format and counted, so the
registry can settle the heap after large exports as after large registrations.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from itertools import chain, groupby, pairwise
from operator import attrgetter
from typing import Any

from .._globs import PatternSet
from .._names import namespace_of
from ._name_index import NameIndex
from ._scope import TurnScope
from ._visibility import Entry, hidden_reason, refused_whatever_the_arguments
from .formats import SchemaFormat

__all__ = ["SelectionIndex"]

# Per namespace: distinct pattern sets remembered before the oldest is dropped.
_PARTS_PER_NAMESPACE = 256
# Namespaces that must lack a bare glob's matches before it is matched on all of them at once.
_JOINTLY = 4

# The schema lists kept for recent (scope, format, strict): a few hundred turns of skills and agents.
_LISTS_KEPT = 512
_ORDER = attrgetter("order")
_NAMESPACE = attrgetter("namespace")
_PatternKey = tuple[tuple[str, ...] | None, tuple[str, ...], tuple[str, ...], bool]


class _Exporter:
    """Exports entries once per entry and format, counting the declarations it makes."""

    __slots__ = ("made",)

    def __init__(self) -> None:
        self.made = 0

    def export(self, entry: Entry, fmt: SchemaFormat, strict: bool) -> dict[str, Any]:
        """The entry's declaration in ``fmt``, kept on the entry."""
        export = entry.exports.get((fmt.name, strict))
        if export is None:
            rule = fmt.name_rule
            name = entry.aliases.get(rule.key, entry.spec.name) if rule is not None else entry.spec.name
            export = entry.exports[(fmt.name, strict)] = fmt.export(entry.spec, name, strict=strict)
            self.made += 1
        return export


@dataclass(eq=False)
class _Share:
    """One namespace's visible entries under one pattern set, in registration order."""

    entries: list[Entry]
    exports: dict[tuple[str, bool], list[dict[str, Any]]] = field(default_factory=dict)

    def exported(self, exporter: _Exporter, fmt: SchemaFormat, strict: bool) -> list[dict[str, Any]]:
        key = (fmt.name, strict)
        schemas = self.exports.get(key)
        if schemas is None:
            export = exporter.export
            schemas = self.exports[key] = [e.exports.get(key) or export(e, fmt, strict) for e in self.entries]
        return schemas


def _pattern_key(scope: TurnScope) -> _PatternKey:
    agent = scope.agent_patterns
    return (
        agent.patterns if agent is not None else None,
        scope.skill_patterns.patterns,
        scope.disallowed_patterns.patterns,
        scope.read_only,
    )


class SelectionIndex:
    """Per-namespace shares of every scope's selection, invalidated one namespace at a time.

    Args:
        by_namespace: The registry's entries by namespace, kept in registration
            order (an entry that changes is removed and added again at the end).
    """

    def __init__(self, by_namespace: Mapping[str | None, dict[str, Entry]]) -> None:
        self._by_namespace = by_namespace
        self._shares: dict[str | None, dict[_PatternKey, _Share]] = {}
        self._matches: dict[str | None, dict[str, _Share]] = {}
        self._names: dict[str | None, NameIndex] = {}
        self._global_counts: dict[str | None, int] = {}
        self._joint: NameIndex | None = None  # every global tool's name
        self._exporter = _Exporter()
        self._lists: OrderedDict[tuple[TurnScope, str, bool], list[dict[str, Any]]] = OrderedDict()

    @property
    def exports_made(self) -> int:
        """Declarations exported so far: each is a few containers the garbage collector walks."""
        return self._exporter.made

    def changed(self, added: Iterable[Entry], removed: Iterable[Entry]) -> None:
        """Forget the shares of every namespace ``added`` or ``removed`` touch, and every kept list."""
        self._lists.clear()
        for entry, step in [*((e, -1) for e in removed), *((e, 1) for e in added)]:
            for cache in (self._shares, self._matches, self._names):
                cache.pop(entry.namespace, None)
            if not entry.internal:
                self._joint = None
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
        if scope.permissions is not None:
            return self._callable(scope, entries)
        named = [entries[n] for n in (*scope.unlocked, *scope.pinned) if n in entries]
        plain = replace(scope, unlocked=frozenset(), pinned=frozenset()) if named else scope
        key = _pattern_key(plain)
        namespaces = self._namespaces(plain)
        unshared = [ns for ns in namespaces if key not in self._shares.get(ns, {})]
        if len(unshared) >= _JOINTLY:
            self._match_jointly(plain, unshared, entries)
        shares = [share for ns in namespaces if (share := self._share(ns, key, plain)).entries]
        shares.sort(key=lambda s: s.entries[0].order)
        # Named tools the patterns alone hide but the names surface or exempt.
        extra = {id(e): e for e in named if hidden_reason(e, plain) is not None and hidden_reason(e, scope) is None}
        ordered = all(a.entries[-1].order < b.entries[0].order for a, b in pairwise(shares))
        if ordered and not extra:
            return shares, None
        merged = [e for share in shares for e in share.entries] + list(extra.values())
        merged.sort(key=lambda e: e.order)
        return [], merged

    def _callable(self, scope: TurnScope, entries: Mapping[str, Entry]) -> tuple[list[_Share], list[Entry] | None]:
        """``select`` for a scope with permissions: the tools of the scope without them, less those they refuse.

        The shares are cached by patterns alone, so they are made without the permissions and filtered after.
        """
        shares, merged = self.select(replace(scope, permissions=None), entries)
        visible = merged if merged is not None else [e for share in shares for e in share.entries]
        kept = [entry for entry in visible if refused_whatever_the_arguments(entry, scope) is None]
        return (shares, merged) if len(kept) == len(visible) else ([], kept)

    def schemas(
        self, scope: TurnScope, entries: Mapping[str, Entry], fmt: SchemaFormat, strict: bool
    ) -> list[dict[str, Any]]:
        """The scope's visible entries exported in ``fmt``, in registration order (shared: read only).

        The lists of the last few hundred (scope, format, strict) are kept until the registry next changes.
        """
        key = (scope, fmt.name, strict)
        listed = self._lists.get(key)
        if listed is not None:
            self._lists.move_to_end(key)
            return listed
        shares, merged = self.select(scope, entries)
        if merged is not None:
            export = self._exporter.export
            listed = [export(entry, fmt, strict) for entry in merged]
        else:
            listed = list(chain.from_iterable(share.exported(self._exporter, fmt, strict) for share in shares))
        self._lists[key] = listed
        if len(self._lists) > _LISTS_KEPT:
            self._lists.popitem(last=False)
        return listed

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

    def _match_jointly(self, scope: TurnScope, namespaces: list[str | None], entries: Mapping[str, Entry]) -> None:
        """Match each bare glob of ``scope`` once for all global ``namespaces`` that lack its matches."""
        narrow = scope.skill_patterns or scope.agent_patterns
        if narrow is None:
            return
        scanned = [ns for ns in namespaces if ns in self._global_counts]
        for glob in narrow.parts_by_server.get(None, ()):
            pattern = glob.patterns[0]
            missing = [ns for ns in scanned if pattern not in self._matches.get(ns, {})]
            if len(missing) < _JOINTLY:
                continue
            if self._joint is None:
                self._joint = NameIndex(name for ns in self._global_counts for name in self._global_names(ns))
            # In registration order a namespace's entries are runs (one, unless it was registered in pieces).
            found: dict[str | None, list[Entry]] = {}
            hits = sorted(map(entries.__getitem__, self._joint.matching(glob)), key=_ORDER)
            for namespace, run in groupby(hits, key=_NAMESPACE):
                found.setdefault(namespace, []).extend(run)
            for namespace in missing:
                self._remember(namespace, pattern, found.get(namespace, []))

    def _remember(self, namespace: str | None, pattern: str, hits: list[Entry]) -> _Share:
        matches = self._matches.setdefault(namespace, {})
        share = matches[pattern] = _Share(hits)
        if len(matches) > _PARTS_PER_NAMESPACE:
            del matches[next(iter(matches))]
        return share

    def _share(self, namespace: str | None, key: _PatternKey, scope: TurnScope) -> _Share:
        shares = self._shares.setdefault(namespace, {})
        share = shares.get(key)
        if share is None:
            share = shares[key] = self._visible(namespace, scope)
            if len(shares) > _PARTS_PER_NAMESPACE:
                del shares[next(iter(shares))]
        return share

    def _visible(self, namespace: str | None, scope: TurnScope) -> _Share:
        """The namespace's entries ``scope`` shows, in registration order.

        Where they are exactly one glob's matches, that glob's share is returned
        itself, so the schemas it exported for earlier scopes serve this one too.
        """
        # A tool matching the narrowest set is visible unless another check is in force.
        checked = scope.agent_patterns is not None or bool(scope.disallowed_patterns) or scope.read_only
        narrow = scope.skill_patterns or scope.agent_patterns
        if narrow is None:
            return _Share(
                [
                    e
                    for e in self._by_namespace.get(namespace, {}).values()
                    if (not e.internal and not checked) or hidden_reason(e, scope) is None
                ]
            )
        matched, surfaced = self._matching(namespace, narrow)
        if checked:
            return _Share([e for e in matched.entries if hidden_reason(e, scope) is None])
        # Unchecked, the narrow set is the skill's, and an internal tool needs a pattern naming its server.
        if self._all_global(namespace):
            return matched
        return _Share([e for e in matched.entries if not e.internal or e.order in surfaced])

    def _matching(self, namespace: str | None, patterns: PatternSet) -> tuple[_Share, set[int]]:
        """Entries any pattern matches (in registration order), and the orders of those surfacing ones match."""
        grouped = patterns.parts_by_server
        named = grouped.get(namespace, ()) if namespace is not None else ()
        # A bare glob never surfaces an internal tool (layer 1): where every tool is internal it adds nothing.
        bare = grouped.get(None, ()) if namespace in self._global_counts else ()
        shares = [self._matched(namespace, part, named=True) for part in named]
        surfaced = {e.order for share in shares for e in share.entries}
        shares += [self._matched(namespace, part, named=False) for part in bare]
        found = [share for share in shares if share.entries]
        if len(found) <= 1:
            return found[0] if found else _Share([]), surfaced
        return _Share(sorted({e for share in found for e in share.entries}, key=_ORDER)), surfaced

    def _matched(self, namespace: str | None, glob: PatternSet, *, named: bool) -> _Share:
        """The namespace's entries one glob matches, kept until the namespace changes.

        A glob naming the namespace is tried on its names directly. A bare glob
        is tried on every global namespace, through an index of its global
        names only: a bare glob never surfaces an internal tool (layer 1).
        """
        pattern = glob.patterns[0]
        share = self._matches.get(namespace, {}).get(pattern)
        if share is None:
            entries = self._by_namespace.get(namespace, {})
            if named:
                hits = [entries[name] for name in glob.filter(entries)]
            else:
                index = self._names.get(namespace)
                if index is None:
                    index = self._names[namespace] = NameIndex(self._global_names(namespace))
                hits = sorted((entries[name] for name in index.matching(glob)), key=_ORDER)
            share = self._remember(namespace, pattern, hits)
        return share

    def _all_global(self, namespace: str | None) -> bool:
        """Whether the namespace holds no internal tool."""
        return self._global_counts.get(namespace) == len(self._by_namespace.get(namespace, ()))

    def _global_names(self, namespace: str | None) -> Iterable[str]:
        """The names of the namespace's global tools."""
        entries = self._by_namespace.get(namespace, {})
        if self._all_global(namespace):
            return entries.keys()
        return (name for name, entry in entries.items() if not entry.internal)
