"""Layer 5: the caller's permissions, config rules that set what tools require,
and the pluggable extra checks that run last."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from .._globs import compile_patterns
from ._approval import Approver
from ._known_names import first_matching, matches_any, tool_names
from ._levels import Level
from ._spec import ToolSpec

__all__ = ["PermissionLayer", "Permissions", "ToolRule", "approval_reason", "check_permissions"]


@dataclass(frozen=True)
class Permissions:
    """What the caller of ``execute`` may do (layer 5).

    Checked in this order, the first refusal wins: ``denylist`` (globs that are
    always refused), ``allowlist`` (globs; when set, nothing else is allowed),
    the tool's required level against ``level``, then the tool's required custom
    permissions against ``custom``, then any extra permission layers. A call
    that passes them all and matches ``ask`` (or ``ask_destructive``) runs only
    when ``approver`` says yes: deny > ask > allow. Every glob matches a tool
    by any name it is known by (``builtin__read_file`` as well as
    ``read_file``; see ``ToolRegistry.names``).

    Attributes:
        level: The caller's level; the default ``WRITE`` runs everything but
            program execution and admin tools.
        denylist: Globs the caller may never call.
        allowlist: Globs the caller may call; ``None`` means no allowlist.
        custom: Named permissions the caller holds (``"memory.delete"``).
        ask: Globs of tools whose calls wait for approval.
        ask_destructive: Calls of tools that may be destructive (MCP annotations:
            not ``readOnlyHint``, ``destructiveHint`` not false) wait for approval.
        approver: Says yes or no to a call that asks; without one such calls are
            refused. Not part of equality: it is who answers, not what is allowed.
    """

    level: Level = Level.WRITE
    denylist: tuple[str, ...] = ()
    allowlist: tuple[str, ...] | None = None
    custom: frozenset[str] = field(default_factory=frozenset)
    ask: tuple[str, ...] = ()
    ask_destructive: bool = False
    approver: Approver | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "level", Level.parse(self.level))
        object.__setattr__(self, "denylist", tuple(self.denylist))
        if self.allowlist is not None:
            object.__setattr__(self, "allowlist", tuple(self.allowlist))
        object.__setattr__(self, "custom", frozenset(self.custom))
        object.__setattr__(self, "ask", tuple(self.ask))
        compile_patterns(self.denylist, where="permissions denylist")
        compile_patterns(self.ask, where="permissions ask")
        if self.allowlist is not None:
            compile_patterns(self.allowlist, where="permissions allowlist")


class PermissionLayer(Protocol):
    """An extra layer-5 check, run after the built-in ones.

    Return None to allow, or the reason for refusing. It must not block: it runs
    on every call, before the tool.
    """

    def check(self, spec: ToolSpec, args: Mapping[str, Any], permissions: Permissions) -> str | None:
        """Return None to allow the call, or why it is refused."""
        ...


def check_permissions(
    spec: ToolSpec,
    args: Mapping[str, Any],
    permissions: Permissions,
    layers: Iterable[PermissionLayer] = (),
    *,
    names: Sequence[str] | None = None,
) -> str | None:
    """Run layer 5 for one call and return the first refusal's reason, or None.

    Args:
        spec: The tool, config rules applied.
        args: The call's arguments (extra layers judge them).
        permissions: The caller's.
        layers: Extra permission layers, run last.
        names: Every name the tool is known by (``ToolRegistry.names``, which
            holds its provider aliases); without it, the names ``spec`` gives.
    """
    known = names if names is not None else tool_names(spec)
    if permissions.denylist and matches_any(compile_patterns(permissions.denylist), known):
        return "it matches the caller's denylist"
    if permissions.allowlist is not None and not matches_any(compile_patterns(permissions.allowlist), known):
        return "it is not in the caller's allowlist"
    if permissions.level < spec.required_level:
        return f"it requires level {spec.required_level}, the caller has {permissions.level}"
    missing = spec.required_permissions - permissions.custom
    if missing:
        return f"it requires permission(s) {', '.join(sorted(missing))} that the caller lacks"
    for layer in layers:
        reason = layer.check(spec, args, permissions)
        if reason is not None:
            return reason
    return None


@dataclass(frozen=True)
class ToolRule:
    """A config rule that raises what matching tools require (``tools.permissions``).

    Attributes:
        match: A glob over tool names (any name a tool is known by, see ``ToolRegistry.names``).
        required_level: When set, the level matching tools require.
        required_permissions: Custom permissions added to matching tools.
    """

    match: str
    required_level: Level | None = None
    required_permissions: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        compile_patterns([self.match], where="tools.permissions match")
        if self.required_level is not None:
            object.__setattr__(self, "required_level", Level.parse(self.required_level))
        object.__setattr__(self, "required_permissions", frozenset(self.required_permissions))

    def apply(self, spec: ToolSpec, names: Sequence[str] | None = None) -> ToolSpec:
        """Return ``spec`` with this rule applied when it matches, else ``spec`` itself.

        ``names`` are the tool's names (aliases included); without them, those ``spec`` gives.
        """
        if not matches_any(compile_patterns([self.match]), names if names is not None else tool_names(spec)):
            return spec
        level = self.required_level if self.required_level is not None else spec.required_level
        return replace(
            spec,
            required_level=level,
            required_permissions=spec.required_permissions | self.required_permissions,
        )


def approval_reason(spec: ToolSpec, permissions: Permissions, names: Sequence[str] | None = None) -> str | None:
    """Why a call of ``spec`` must be approved under ``permissions``, or None when it need not be.

    ``names`` are every name the tool is known by (``ToolRegistry.names``); an
    ask rule written with any of them holds the call back.
    """
    if permissions.ask:
        known = names if names is not None else tool_names(spec)
        if matches_any(compile_patterns(permissions.ask), known):
            return f"it matches ask rule {first_matching(permissions.ask, known)!r}"
    if permissions.ask_destructive and spec.destructive:
        return "it may be destructive (MCP annotations: not readOnlyHint, destructiveHint not false)"
    return None
