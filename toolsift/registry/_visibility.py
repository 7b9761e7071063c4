"""Layers 1-4: whether a tool is in a turn's scope, and selecting a scope's tools fast.

``schemas_for_tools`` and ``execute`` both decide through :func:`hidden_reason`,
which is what guarantees that the model can call only what it was shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._globs import PatternSet
from ._names import SEPARATOR, namespace_of
from ._scope import TurnScope
from ._tools import Tool, ToolSpec

__all__ = ["Entry", "hidden_reason", "select"]


@dataclass(eq=False)
class Entry:
    """A registered tool with what the registry derives from it once.

    Compared by identity: a changed tool is a new entry, which is what keeps
    the per-entry export cache (``exports``) from ever serving stale schemas.
    """

    tool: Tool
    spec: ToolSpec
    internal: bool
    order: int
    namespace: str | None
    aliases: dict[str, str] = field(default_factory=dict)
    exports: dict[tuple[str, bool], dict[str, Any]] = field(default_factory=dict)
    validator: Any = None


def hidden_reason(entry: Entry, scope: TurnScope) -> tuple[int, str] | None:
    """Return (layer, reason) when layers 1, 3 or 4 hide the tool in ``scope``, else None.

    This is the one rule for layers 1-4: the listing is the catalogue filtered
    by it and every call asks it again, so what is listed and what runs cannot
    differ. Layer 2 (the tool is registered) is the caller's lookup.

    - Layer 1: an internal tool surfaces only when it is pinned, unlocked, or
      matched by a skill pattern that names its server literally; a bare
      wildcard (``*``, ``*_search``) in the same skill never surfaces it.
    - Layer 3: the agent allowlist bounds everything, pinned tools included.
    - Layer 4: the skill's allowed-tools (pinned tools are exempt: they are in
      every turn the agent allows), its disallowed-tools (which bind pinned
      tools too) and plan mode.
    """
    name = entry.spec.name
    skill = scope.skill_patterns
    pinned = name in scope.pinned
    if entry.internal and not (pinned or name in scope.unlocked or skill.surfaces(name)):
        return 1, (
            f"server {entry.namespace!r} is internal (internalOnly); only an active skill pattern that names "
            f"it literally ({entry.namespace}{SEPARATOR}...) and matches the tool surfaces it"
        )
    agent = scope.agent_patterns
    if agent is not None and not agent.matches(name):
        return 3, f"not in agent {scope.agent or '(default)'!r} allowed_tools"
    if skill and not pinned and not skill.matches(name):
        return 4, f"not in skill {scope.skill!r} allowed-tools"
    if scope.disallowed_patterns and scope.disallowed_patterns.matches(name):
        return 4, f"listed in skill {scope.skill!r} disallowed-tools"
    if scope.read_only and not entry.spec.read_only:
        return 4, "plan mode offers read-only tools only"
    return None


def _candidates(patterns: PatternSet, by_namespace: Mapping[str | None, dict[str, Entry]],
                global_entries: Iterable[Entry]) -> Iterable[Entry]:
    """Entries whose name could match ``patterns``, found by each pattern's literal prefix.

    A prefix holding ``__`` names a namespace, so only that namespace is read;
    any other prefix can match a global tool only (an internal tool needs a
    pattern naming its server literally, and such a pattern's prefix holds
    ``__``), so the global tier is read once.
    """
    scan_globals = False
    for prefix in patterns.prefixes:
        namespace = namespace_of(prefix)
        if namespace is None:
            scan_globals = True
            continue
        for name, entry in by_namespace.get(namespace, {}).items():
            if name.startswith(prefix):
                yield entry
    if scan_globals:
        yield from global_entries


def select(scope: TurnScope, by_namespace: Mapping[str | None, dict[str, Entry]],
           global_entries: Iterable[Entry], entries: Mapping[str, Entry]) -> list[Entry]:
    """Every entry visible in ``scope`` (``hidden_reason`` is None), in registration order.

    The result equals filtering the whole catalogue by :func:`hidden_reason`;
    only the entries that could pass are tested, so a skill naming two servers
    looks at those servers' tools, not all ten thousand. The candidates are a
    superset of the visible entries: a visible tool is pinned or unlocked (both
    added by name), or it matches the narrowest pattern set in force (the
    skill's, else the agent's), which :func:`_candidates` reaches by prefix.
    """
    if scope.skill_patterns:
        candidates: Iterable[Entry] = _candidates(scope.skill_patterns, by_namespace, global_entries)
    elif scope.agent_patterns is not None:
        candidates = _candidates(scope.agent_patterns, by_namespace, global_entries)
    else:
        candidates = global_entries
    named = [entries[n] for n in (*scope.unlocked, *scope.pinned) if n in entries]
    seen: dict[int, Entry] = {}
    for entry in (*candidates, *named):
        if id(entry) not in seen and hidden_reason(entry, scope) is None:
            seen[id(entry)] = entry
    return sorted(seen.values(), key=lambda e: e.order)
