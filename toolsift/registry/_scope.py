"""The turn scope: which agent and skill patterns apply to one turn."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property

from .._globs import PatternSet, compile_patterns
from ._permissions import Permissions

__all__ = ["TurnScope"]


def _as_tuple(value: Iterable[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return (value,) if isinstance(value, str) else tuple(value)


@dataclass(frozen=True)
class TurnScope:
    """Layers 3 and 4 for one turn, plus what surfaces internal tools.

    A scope is immutable and hashable, so the registry caches each turn's schema
    list per (registry generation, scope, format).

    Attributes:
        agent_allowed: Layer 3, the agent-wide maximum. ``None`` means no limit;
            an empty tuple allows nothing.
        skill_allowed: Layer 4, the active skill's ``allowed-tools``. Empty means
            no extra limit. Patterns naming a server literally (``S__...``) also
            surface that internal server's tools (layer 1).
        skill_disallowed: Patterns removed from the turn even when allowed elsewhere.
        skill: The active skill's name, for audit records.
        agent: The agent profile's name, for audit records.
        read_only: Plan mode: only read-only tools are offered and allowed.
        unlocked: Exact tool names surfaced for this turn (on-demand discovery);
            layers 3 and 4 still apply to them.
        pinned: Exact tool names in every turn (``alwaysLoad``, ``search_tools``):
            surfaced like unlocked tools and exempt from the skill's
            allowed-tools, but still bound by the agent allowlist, the skill's
            disallowed-tools and plan mode.
        permissions: The caller's layer-5 permissions, when the listing should
            leave out what they refuse whatever the arguments (a level too low,
            the denylist, the allowlist, a custom permission missing): a tool the
            caller can never call is not offered. None lists without asking.
    """

    agent_allowed: tuple[str, ...] | None = None
    skill_allowed: tuple[str, ...] = ()
    skill_disallowed: tuple[str, ...] = ()
    skill: str | None = None
    agent: str | None = None
    read_only: bool = False
    unlocked: frozenset[str] = field(default_factory=frozenset)
    pinned: frozenset[str] = field(default_factory=frozenset)
    permissions: Permissions | None = None

    def __post_init__(self) -> None:
        # Accept lists and strings from callers, store tuples so the scope stays hashable.
        object.__setattr__(self, "agent_allowed", _as_tuple(self.agent_allowed))
        object.__setattr__(self, "skill_allowed", _as_tuple(self.skill_allowed) or ())
        object.__setattr__(self, "skill_disallowed", _as_tuple(self.skill_disallowed) or ())
        object.__setattr__(self, "unlocked", frozenset(self.unlocked))
        object.__setattr__(self, "pinned", frozenset(self.pinned))
        # Compile now so a bad pattern fails where the scope is built, naming its origin.
        _ = self.agent_patterns, self.skill_patterns, self.disallowed_patterns

    @cached_property
    def agent_patterns(self) -> PatternSet | None:
        """Compiled layer-3 patterns, or None when the agent has no limit."""
        if self.agent_allowed is None:
            return None
        return compile_patterns(self.agent_allowed, where=f"agent {self.agent or '(default)'!r} allowed_tools")

    @cached_property
    def skill_patterns(self) -> PatternSet:
        """Compiled layer-4 patterns (empty: no extra limit)."""
        return compile_patterns(self.skill_allowed, where=f"skill {self.skill!r} allowed-tools")

    @cached_property
    def disallowed_patterns(self) -> PatternSet:
        """Compiled patterns removed from the turn."""
        return compile_patterns(self.skill_disallowed, where=f"skill {self.skill!r} disallowed-tools")

    def with_unlocked(self, names: Iterable[str]) -> TurnScope:
        """A copy of this scope that also surfaces ``names``."""
        return replace(self, unlocked=self.unlocked | frozenset(names))

    def with_pinned(self, names: Iterable[str]) -> TurnScope:
        """A copy of this scope that also pins ``names`` (see ``pinned``)."""
        return replace(self, pinned=self.pinned | frozenset(names))
