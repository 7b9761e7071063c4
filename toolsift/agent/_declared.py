"""The tools a conversation declares to its model: one stable list per wire format, and the deferred ones.

A conversation may talk to models of several formats (a hand-written loop
asking for ``openai`` and ``anthropic`` turns); each provider caches its own
prefix, so each format keeps its own :class:`StableToolList`. A model that
searches tools natively (``defers_tools``) is given up front only the global
tools, the pinned ones and ``search_tools``, in a list that only grows at its
end; every internal tool the conversation's scope has allowed (what
``search_tools`` could unlock, and what an active skill surfaces) goes in the
deferred list, which only grows too. Deferred tools stay out of the cached
prefix until the model loads them by reference, so neither ``/use``, a skill
switch nor ``/unuse`` rewrites the tools; calls are checked against the live
scope, and a deferred tool it no longer allows is refused with the reason.
The one exception is a skill's tools that :class:`LoadRule` puts up front
(:meth:`DeclaredTools.put_up_front`): they are appended to the list, and only
they may leave it again, by :class:`KeepRule`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, final

from .._names import SEARCH_TOOL_NAME
from ..registry import ToolRegistry, TurnScope
from ..search import Discovery
from ._tool_list import KeepRule, StableToolList, estimated_tokens

__all__ = ["DeclaredTools", "schema_name"]


def schema_name(schema: Mapping[str, Any]) -> str:
    """The tool name a declaration carries, in any format (OpenAI Chat nests it under ``function``)."""
    return str(schema["function"]["name"] if "function" in schema else schema["name"])


@final
class DeclaredTools:
    """What one conversation declared to its model, per ``(format, strict)``.

    Args:
        registry: The tools.
        discovery: What ``search_tools`` unlocks and finds (None: nothing is ever deferred).
    """

    def __init__(self, registry: ToolRegistry, discovery: Discovery | None) -> None:
        self.registry = registry
        self.discovery = discovery
        self._lists: dict[tuple[str, bool], StableToolList] = {}
        self._deferred: dict[tuple[str, bool], dict[str, dict[str, Any]]] = {}  # name -> schema
        self._deferred_left: dict[str, str] = {}
        self._up_front: set[str] = set()  # surfaced tools a deferring model is given in the list

    def names(self, format: str, strict: bool = False) -> tuple[str, ...]:
        """The canonical names declared in ``format``'s list, in order (empty before its first turn)."""
        tool_list = self._lists.get((format, strict))
        return tool_list.names if tool_list is not None else ()

    def rules(self, format: str, strict: bool = False) -> list[KeepRule]:
        """The keep-or-remove decisions taken for ``format``'s list, oldest first."""
        tool_list = self._lists.get((format, strict))
        return list(tool_list.decisions) if tool_list is not None else []

    def declare(
        self,
        scope: TurnScope,
        format: str,
        strict: bool,
        *,
        before: TurnScope | None,
        tail_tokens: int,
        requests: int,
        deferring: bool = False,
    ) -> list[dict[str, Any]]:
        """This round's list for ``scope`` (see :class:`StableToolList`); ``before`` is the last round's scope.

        ``deferring`` (a model that loads tools by reference, with ``search_tools``
        registered): the list holds the scope's tools but the ones :meth:`surfaced`
        defers (unless :meth:`put_up_front` put them there), plus ``search_tools``
        itself, and drops only tools put up front.
        """
        if deferring:
            scope = scope.with_pinned((SEARCH_TOOL_NAME,))
        surfaced = set(self.surfaced(scope)) - self._up_front if deferring else set()
        schemas = self.registry.schemas_for_tools(scope, format, strict=strict)
        # The same selection in the same (registration) order, so the two lists pair up.
        names = [tool.spec.name for tool in self.registry.visible_tools(scope)]
        tool_list = self._lists.setdefault((format, strict), StableToolList())
        declared = tool_list.update(
            ((name, schema) for name, schema in zip(names, schemas, strict=True) if name not in surfaced),
            registered=self.registry.__contains__,
            why_left=lambda name: why_left(name, before, scope),
            tail_tokens=tail_tokens,
            requests=requests,
            removable=self._up_front.__contains__ if deferring else None,
        )
        if deferring:  # a tool the keep rule removed is deferred again, to be loaded by the rule next time
            self._up_front.intersection_update(tool_list.names)
        return declared

    def given(self, format: str) -> set[str]:
        """The tools ``format``'s list declares or will declare from the next round on (put up front)."""
        return {*self.names(format), *self._up_front}

    def put_up_front(self, names: list[str]) -> None:
        """Declare these surfaced tools in the list from the next round on, rather than defer them."""
        self._up_front.update(names)

    def tokens(self, names: list[str], scope: TurnScope, format: str) -> int:
        """The estimated tokens of the definitions of ``names`` (tools ``scope`` shows) in ``format``."""
        wanted = set(names)
        schemas = self.registry.schemas_for_tools(scope, format)
        visible = (tool.spec.name for tool in self.registry.visible_tools(scope))
        return sum(estimated_tokens(schema) for name, schema in zip(visible, schemas, strict=True) if name in wanted)

    def defers(self) -> bool:
        """Whether a model with native tool search gets deferred tools: ``search_tools`` is there to load them."""
        return self.discovery is not None and SEARCH_TOOL_NAME in self.registry

    def surfaced(self, shown: TurnScope) -> list[str]:
        """Internal tools ``shown`` makes visible that a deferring model loads by reference: those an
        active skill surfaces (not pinned, not ``search_tools``), in registration order."""
        return [
            name
            for tool in self.registry.visible_tools(shown)
            if (name := tool.spec.name) != SEARCH_TOOL_NAME
            and name not in shown.pinned
            and name not in shown.unlocked
            and self.registry.is_internal(name)
        ]

    def findable(self, shown: TurnScope) -> list[str]:
        """What ``search_tools`` could unlock in ``shown``: nothing when the turn does not offer it."""
        if self.discovery is None or SEARCH_TOOL_NAME not in self.registry:
            return []
        if self.registry.hidden_reason(SEARCH_TOOL_NAME, shown) is not None:
            return []
        return self.discovery.findable(shown)

    def deferred(
        self, allowed: list[str], format: str, strict: bool, *, before: TurnScope | None, now: TurnScope
    ) -> list[dict[str, Any]]:
        """Every tool deferred so far in ``format`` and still registered, in the order first deferred.

        ``allowed`` are the tools the turn's scope lets the model load now (what
        ``search_tools`` could unlock and what the skill surfaces); they join the
        list at its end, a changed schema is replaced where it stands, and a tool
        the scope no longer allows stays, refused at call time with why it left.
        """
        declared = set(self.names(format, strict))
        kept = self._deferred.setdefault((format, strict), {})
        wanted = [name for name in allowed if name not in declared]
        chosen = set(wanted)
        surfaced = now.with_unlocked(wanted)
        fresh = dict(
            zip(
                (tool.spec.name for tool in self.registry.visible_tools(surfaced)),
                self.registry.schemas_for_tools(surfaced, format, strict=strict),
                strict=True,
            )
        )
        for name in wanted:
            if name in fresh:
                kept[name] = fresh[name]
                self._deferred_left.pop(name, None)
        for name in list(kept):
            if name not in self.registry or name in declared:
                del kept[name]
            elif name not in chosen or name not in fresh:
                self._deferred_left.setdefault(name, why_left(name, before, now))
        return list(kept.values())

    def left_why(self, name: str, scope: TurnScope) -> str | None:
        """When and why a declared tool left the scope, if ``name`` is one that ``scope`` hides."""
        if name not in self.registry or self.registry.hidden_reason(name, scope) is None:
            return None
        canonical = self.registry.resolve(name)
        listed = next((lst.left[canonical] for lst in self._lists.values() if canonical in lst.left), None)
        return listed if listed is not None else self._deferred_left.get(canonical)


def why_left(name: str, before: TurnScope | None, now: TurnScope) -> str:
    """When and why ``name`` left the scope between the ``before`` and ``now`` rounds."""
    if before is not None and name in before.unlocked and name not in now.unlocked:
        return "its unlock by search_tools ended (unlocks last one message, or the unlock cap evicted it)"
    if before is not None and before.skill != now.skill:
        if now.skill is None:
            return f"skill {before.skill!r} stopped"
        if before.skill is None:
            return f"skill {now.skill!r} became active and does not allow it"
        return f"skill {now.skill!r} replaced skill {before.skill!r}"
    if now.read_only and (before is None or not before.read_only):
        return "plan mode began"
    if now.skill is not None:
        return f"skill {now.skill!r} no longer allows it (its SKILL.md changed)"
    return "the conversation's scope changed"
