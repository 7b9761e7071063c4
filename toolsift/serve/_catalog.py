"""The composite provider: which tools ``toolsift serve`` lists, and where each call goes.

Three sources, each a registry seen through one scope and one pipeline:

- ``builtin__<name>``: the registry's bare-named tools (``read_file``...),
  seen through the served profile;
- ``skill__<name>``: one tool per user-invocable skill, from a registry of
  their own (skills are instructions, not actions: the profile's tool limits
  apply to the tools a skill names, when those are called);
- ``<server>__<tool>`` in gateway mode: the MCP tools the profile sees,
  narrowed by the gateway's skill or patterns, plus ``search_tools`` when the
  profile offers tool search. A scope other than the gateway source's own
  (a handshake-era client's unlocks, a skill's turn, a tool ``call_tool``
  reaches) is passed as ``gateway=`` to the methods below.

With ``prefix=False`` a gateway tool is served under its server's own name
when no other served tool has that name (the rest keep ``<server>__``). A
call is routed by the listing's names first, then on the first ``__`` of its
name. The builtin source takes
only names without a further ``__``, so ``builtin__github__delete_repo``
cannot reach a gateway tool around the gateway's narrower scope; and every
call is re-checked against the same scope its source lists with, so what a
client can call is exactly what it was shown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, final

import mcp.types as types

from .._exceptions import ToolHeld, ToolNotFound
from .._globs import compile_patterns
from .._names import SEARCH_TOOL_NAME, SERVED_BUILTIN_NAMESPACE, split_name
from ..pipeline import Pipeline
from ..pipeline._internal import refuse
from ..registry import Approver, CallRecord, Permissions, ToolRegistry, ToolResult, TurnScope
from ..registry._internal import Forward, ProgressCallback, Unlocks, check_permissions
from ..skills import Skill
from ._skills import SKILL_NAMESPACE

__all__ = ["BUILTIN_NAMESPACE", "RESERVED_NAMESPACES", "ServedTools", "ToolSource"]

BUILTIN_NAMESPACE = SERVED_BUILTIN_NAMESPACE  # permission rules know tools by these names too
RESERVED_NAMESPACES = frozenset({BUILTIN_NAMESPACE, SKILL_NAMESPACE})


@dataclass(frozen=True)
class ToolSource:
    """One namespace of served tools.

    Attributes:
        kind: ``builtin``, ``skill`` or ``gateway``.
        registry: Where its tools live.
        pipeline: What its calls pass through.
        scope: The scope its tools are listed and called with (layers 1-4).
        permissions: The permissions its calls run with (layer 5): tools they
            certainly cannot call are not listed. None: list regardless.
    """

    kind: str
    registry: ToolRegistry
    pipeline: Pipeline
    scope: TurnScope
    permissions: Permissions | None = None

    def lists(self, canonical: str) -> bool:
        """Whether a tool the scope shows belongs here and its permission checks can pass."""
        if not self.owns(canonical):
            return False
        # Extra permission layers judge arguments, which a listing has none of: only the built-in checks apply.
        return (
            self.permissions is None
            or check_permissions(
                self.registry.spec(canonical), {}, self.permissions, names=self.registry.names(canonical)
            )
            is None
        )

    def owns(self, canonical: str) -> bool:
        """Whether a registry tool belongs to this source's namespace."""
        namespace, _ = split_name(canonical)
        if self.kind == BUILTIN_NAMESPACE:
            return namespace is None and canonical != SEARCH_TOOL_NAME
        if self.kind == SKILL_NAMESPACE:
            return namespace == SKILL_NAMESPACE
        return (namespace is not None and namespace not in RESERVED_NAMESPACES) or canonical == SEARCH_TOOL_NAME

    def served_name(self, canonical: str) -> str:
        """The name clients see for ``canonical``."""
        return f"{BUILTIN_NAMESPACE}__{canonical}" if self.kind == BUILTIN_NAMESPACE else canonical

    def canonical(self, served: str) -> str | None:
        """The registry name a served name stands for, or None when this source has no such tool."""
        name = served.removeprefix(f"{BUILTIN_NAMESPACE}__") if self.kind == BUILTIN_NAMESPACE else served
        try:
            canonical = self.registry.resolve(name)
        except ToolNotFound:
            return None
        return canonical if self.owns(canonical) else None


_LISTINGS_KEPT = 64  # listings of distinct client scopes cached at once


@dataclass(frozen=True)
class _Listing:
    key: tuple[int, ...]
    tools: list[types.Tool]
    # served name -> (canonical name, source), for the tools listed
    names: Mapping[str, tuple[str, ToolSource]]


@final
class ServedTools:
    """Lists the served tools and routes calls to their source's pipeline.

    Args:
        sources: The sources, at most one of each kind.
        timeout: Seconds a call may take; None: no limit.
        prefix: Serve gateway tools as ``<server>__<tool>`` even where their own name is unique.
    """

    def __init__(self, sources: Sequence[ToolSource], *, timeout: float | None = None, prefix: bool = True) -> None:
        self._sources = {source.kind: source for source in sources}
        self._timeout = timeout
        self._prefix = prefix
        self._listings: dict[tuple[tuple[int, ...], TurnScope | None], _Listing] = {}

    @property
    def namespaces(self) -> list[str]:
        """How served names start, for messages (``builtin__*``, ``skill__*``, ``<server>__*``)."""
        return [f"{kind}__*" if kind in RESERVED_NAMESPACES else "<server>__*" for kind in self._sources]

    def set_scope(self, kind: str, scope: TurnScope) -> None:
        """Swap the scope of a source (the gateway's, when its skill is edited)."""
        self._sources[kind] = replace(self._sources[kind], scope=scope)
        self._listings.clear()

    @property
    def generation(self) -> tuple[int, ...]:
        """A value that changes whenever a source's registry does (what listings are cached by)."""
        return tuple(source.registry.generation for source in self._sources.values())

    def scope_of(self, kind: str) -> TurnScope | None:
        """The scope a source lists with, or None when there is no such source."""
        source = self._sources.get(kind)
        return source.scope if source is not None else None

    def _effective(self, gateway: TurnScope | None) -> dict[str, ToolSource]:
        if gateway is None or "gateway" not in self._sources:
            return self._sources
        return {**self._sources, "gateway": replace(self._sources["gateway"], scope=gateway)}

    def _listed(self, gateway: TurnScope | None = None) -> _Listing:
        generations = self.generation
        cached = self._listings.get((generations, gateway))
        if cached is not None:
            return cached
        sources = self._effective(gateway)
        listed = [
            (schema, source)
            for source in sources.values()
            for schema in source.registry.schemas_for_tools(source.scope, "mcp")
            if source.lists(schema["name"])
        ]
        served_names = [source.served_name(schema["name"]) for schema, source in listed]
        if not self._prefix:
            served_names = self._unprefixed(listed, served_names)
        tools: list[types.Tool] = []
        names: dict[str, tuple[str, ToolSource]] = {}
        for (schema, source), served in zip(listed, served_names, strict=True):
            tools.append(types.Tool.model_validate({**schema, "name": served}))
            names[served] = (schema["name"], source)
        listing = _Listing(generations, tools, names)
        if len(self._listings) >= _LISTINGS_KEPT:
            self._listings.clear()  # the registry changed, or many clients came: start over
        self._listings[(generations, gateway)] = listing
        return listing

    @staticmethod
    def _unprefixed(listed: Sequence[tuple[dict[str, Any], ToolSource]], served: Sequence[str]) -> list[str]:
        """Gateway tools under their server's own name, where no other served tool has it."""
        own = [
            source.registry.spec(schema["name"]).remote_name if source.kind == "gateway" else None
            for schema, source in listed
        ]
        taken = Counter(name for name, bare in zip(served, own, strict=True) if bare is None)
        taken.update(bare for bare in own if bare is not None)
        chosen = [
            bare if bare is not None and taken[bare] == 1 else name for name, bare in zip(served, own, strict=True)
        ]
        # A bare name may still equal another server's prefixed one ("a__b" of server c beside server a's "b").
        final = Counter(chosen)
        return [
            name if final[pick] > 1 and pick == bare else pick
            for pick, name, bare in zip(chosen, served, own, strict=True)
        ]

    def gateway_servers(self) -> set[str]:
        """The servers the gateway serves at least one tool of."""
        return {
            source.registry.spec(canonical).server or ""
            for canonical, source in self._listed().names.values()
            if source.kind == "gateway"
        }

    def list_tools(self, gateway: TurnScope | None = None) -> list[types.Tool]:
        """Every served tool, in source order (builtin, skill, gateway), then registration order."""
        return list(self._listed(gateway).tools)

    def signature(self) -> tuple[str, ...]:
        """A value that changes exactly when the served list does (names and definitions)."""
        return tuple(tool.model_dump_json() for tool in self._listed().tools)

    def tools_for(self, skill: Skill, gateway: TurnScope | None = None) -> list[str]:
        """The served tools (skills aside) that ``skill``'s allowed-tools match, minus its disallowed-tools.

        ``gateway`` is the gateway scope to list with: the skill's own turn scope
        also reaches the internal servers the skill names.
        """
        if not skill.allowed_tools:
            return []
        allowed = compile_patterns(skill.allowed_tools)
        disallowed = compile_patterns(skill.disallowed_tools) if skill.disallowed_tools else None
        return [
            served
            for served, (canonical, source) in self._listed(gateway).names.items()
            if source.kind != SKILL_NAMESPACE
            and allowed.matches(canonical)
            and not (disallowed is not None and disallowed.matches(canonical))
        ]

    def served_names(self, gateway: TurnScope | None = None) -> dict[str, str]:
        """Canonical name -> served name of every tool listed with gateway scope ``gateway``."""
        return {canonical: served for served, (canonical, _) in self._listed(gateway).names.items()}

    def _unknown(self, name: str) -> str:
        """Why nothing serves ``name``: a tool held back since its server changed it says so and how to accept it."""
        gateway = self._sources.get("gateway")
        try:
            if gateway is not None:
                gateway.registry.resolve(name)
        except ToolHeld as held:
            return str(held)
        except ToolNotFound:
            pass
        serves = ", ".join(self.namespaces)
        return f"Unknown tool {name!r}: this server serves {serves}; list the tools to see their names"

    def route(self, name: str, gateway: TurnScope | None = None) -> tuple[ToolSource, str] | None:
        """The source and canonical name a served name goes to, or None when nothing serves it."""
        listed = self._listed(gateway).names.get(name)
        if listed is not None:
            return listed[1], listed[0]
        namespace, rest = split_name(name)
        if namespace is None or not rest:
            return None
        kind = namespace if namespace in RESERVED_NAMESPACES else "gateway"
        source = self._effective(gateway).get(kind)
        if source is None or (kind == BUILTIN_NAMESPACE and split_name(rest)[0] is not None):
            return None
        canonical = source.canonical(name)
        return (source, canonical) if canonical is not None else None

    def record(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        routed: tuple[ToolSource, str] | None,
        *,
        progress: ProgressCallback | None = None,
        discovery: Unlocks | None = None,
        approver: Approver | None = None,
        forward: Forward | None = None,
    ) -> tuple[Pipeline, CallRecord] | ToolResult:
        """The call of served tool ``name`` as :meth:`route` routed it, and the pipeline of its source to run it.

        The caller routes once (and may act on the route: start a lazy server, relay its requests); an
        unknown name (``routed`` None) gives its error result instead. ``discovery``, ``approver`` and
        ``forward`` go into the call record (see :class:`CallRecord`).
        """
        if routed is None:
            return refuse("router", self._unknown(name))
        source, canonical = routed
        record = CallRecord(
            canonical,
            arguments if arguments is not None else {},
            source.scope,
            timeout=self._timeout,
            progress=progress,
            discovery=discovery,
            approver=approver,
            forward=forward,
        )
        return source.pipeline, record
