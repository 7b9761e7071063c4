"""Layers 1-4: whether a tool is in a turn's scope (``_selection`` lists a scope's tools fast).

``schemas_for_tools`` and ``execute`` both decide through :func:`hidden_reason`,
which is what guarantees that the model can call only what it was shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._names import SEPARATOR
from ._permissions import check_permissions
from ._scope import TurnScope
from ._spec import ToolSpec
from ._tools import Tool

__all__ = ["Entry", "hidden_reason", "refused_whatever_the_arguments"]


@dataclass(eq=False, slots=True)
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
    # Every name permission rules match it by (canonical first; see ``tool_names``).
    names: tuple[str, ...] = ()
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
    - Layer 5, when the scope carries the caller's permissions: what they refuse
      whatever the arguments (see :func:`refused_whatever_the_arguments`).
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
    refusal = refused_whatever_the_arguments(entry, scope)
    return (5, refusal) if refusal is not None else None


def refused_whatever_the_arguments(entry: Entry, scope: TurnScope) -> str | None:
    """Why the scope's permissions refuse every call of the tool, or None (also when the scope has none).

    Only the checks that do not read the arguments: the extra permission layers,
    which may, still run on each call.
    """
    if scope.permissions is None:
        return None
    return check_permissions(entry.spec, {}, scope.permissions, names=entry.names)
