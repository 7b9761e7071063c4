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

    Layer 2 (the tool is registered) is the caller's lookup.
    """
    name = entry.spec.name
    skill = scope.skill_patterns
    if entry.internal and entry.namespace not in skill.servers and name not in scope.unlocked:
        return 1, (
            f"server {entry.namespace!r} is internal (internalOnly); only an active skill whose "
            f"allowed-tools names it literally ({entry.namespace}{SEPARATOR}...) surfaces its tools"
        )
    agent = scope.agent_patterns
    if agent is not None and not agent.matches(name):
        return 3, f"not in agent {scope.agent or '(default)'!r} allowed_tools"
    if skill and not skill.matches(name):
        return 4, f"not in skill {scope.skill!r} allowed-tools"
    if scope.disallowed_patterns and scope.disallowed_patterns.matches(name):
        return 4, f"listed in skill {scope.skill!r} disallowed-tools"
    if scope.read_only and not entry.spec.read_only:
        return 4, "plan mode offers read-only tools only"
    return None


def _candidates(patterns: PatternSet, by_namespace: Mapping[str | None, dict[str, Entry]],
                global_entries: Iterable[Entry]) -> Iterable[Entry]:
    """Entries that could match ``patterns``, found by each pattern's literal prefix."""
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
    """Every entry visible in ``scope``, in registration order.

    Only candidates reachable from the narrowest pattern set are tested, so a
    skill naming two servers looks at those servers' tools, not all ten thousand.
    A prefix without ``__`` can only reach internal tools through a literal
    server name, which such a prefix is not, so scanning global tools suffices.
    """
    if scope.skill_patterns:
        candidates: Iterable[Entry] = _candidates(scope.skill_patterns, by_namespace, global_entries)
    elif scope.agent_patterns is not None:
        candidates = _candidates(scope.agent_patterns, by_namespace, global_entries)
    else:
        candidates = global_entries
    unlocked = [entries[n] for n in scope.unlocked if n in entries]
    seen: dict[int, Entry] = {}
    for entry in (*candidates, *unlocked):
        if id(entry) not in seen and hidden_reason(entry, scope) is None:
            seen[id(entry)] = entry
    return sorted(seen.values(), key=lambda e: e.order)
