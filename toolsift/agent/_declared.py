"""The tools a conversation declares to its model: one stable list per wire format, and the deferred ones.

A conversation may talk to models of several formats (a hand-written loop
asking for ``openai`` and ``anthropic`` turns); each provider caches its own
prefix, so each format keeps its own :class:`StableToolList`. A model that
searches tools natively (``defers_tools``) is given up front the scope's global
and pinned tools (and ``search_tools`` while there is something to find); the
deferred list holds exactly what the scope lets it load now (what ``search_tools``
could unlock, and what an active skill surfaces, that a call would pass), in the
order first deferred. What the scope forbids is never deferred, so no search, the
provider's own included, can load it; a tool that leaves the scope leaves the
deferred list at once, and a call to it (loaded before it left) is refused with
when and why it left. Deferred tools stay out of the cached prefix until the
model loads them by reference. A skill's tools that
:class:`LoadRule` puts up front (:meth:`DeclaredTools.put_up_front`) are appended
to the list; tools that leave the scope (the globals a skill hides, a skill's
tools at ``/unuse``) leave the list when :class:`KeepRule` finds that cheaper,
as for any model. Declarations are sent compact (:func:`compact_declaration`):
the registry's exports, and validation, are untouched.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, final

from .._names import SEARCH_TOOL_NAME
from ..registry import ToolRegistry, TurnScope
from ..search import Discovery
from ._compact import compact_declaration
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
        self._deferred_order: dict[str, int] = {}  # canonical name -> when it was first deferred (0, 1, ...)
        self._deferred_now: dict[tuple[str, bool], tuple[str, ...]] = {}  # what each format was last given deferred
        self._deferred_left: dict[str, str] = {}  # a tool no longer given deferred -> when and why it left
        self._up_front: set[str] = set()  # surfaced tools a deferring model is given in the list
        # (name, format, strict) -> (the registry's export, its compact form): compacted once per export.
        self._compacted: dict[tuple[str, str, bool], tuple[dict[str, Any], dict[str, Any]]] = {}

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
        loaded: Collection[str] = (),
        on_demand: bool = False,
    ) -> list[dict[str, Any]]:
        """This round's list for ``scope`` (see :class:`StableToolList`); ``before`` is the last round's scope.

        ``deferring`` (a model that loads tools by reference, with ``search_tools``
        registered): the list holds the scope's tools but the ones :meth:`surfaced`
        defers (unless :meth:`put_up_front` put them there). ``search_tools`` is
        there when the scope offers it, and also, so that the model can load them,
        while surfaced tools are deferred that are neither up front nor ``loaded``
        by reference yet (a skill that changed during a tool round); a skill whose
        tools all reached the model that way does not pay for its definition.
        ``on_demand`` (a model whose provider's search loads what it calls): the global
        tools are deferred too, and the list holds only the pinned ones and ``search_tools``.
        """
        surfaced = set(self.surfaced(scope, everything=on_demand)) - self._up_front if deferring else set()
        if surfaced - set(loaded) and not on_demand:
            scope = scope.with_pinned((SEARCH_TOOL_NAME,))
        tool_list = self._lists.setdefault((format, strict), StableToolList())
        declared = tool_list.update(
            ((name, schema) for name, schema in self.exports(scope, format, strict).items() if name not in surfaced),
            registered=self.registry.__contains__,
            why_left=lambda name: why_left(name, before, scope),
            tail_tokens=tail_tokens,
            requests=requests,
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
        exports = self.exports(scope, format)
        return sum(estimated_tokens(exports[name]) for name in dict.fromkeys(names) if name in exports)

    def exports(self, scope: TurnScope, format: str, strict: bool = False) -> dict[str, dict[str, Any]]:
        """The declarations of the tools ``scope`` shows in ``format``, by canonical name in registration
        order, in the compact form the model is sent (see :func:`compact_declaration`)."""
        schemas = self.registry.schemas_for_tools(scope, format, strict=strict)
        # The same selection in the same (registration) order, so the two lists pair up.
        names = (tool.spec.name for tool in self.registry.visible_tools(scope))
        return {name: self._compact(name, schema, format, strict) for name, schema in zip(names, schemas, strict=True)}

    def _compact(self, name: str, schema: dict[str, Any], format: str, strict: bool) -> dict[str, Any]:
        key = (name, format, strict)
        seen = self._compacted.get(key)
        if seen is not None and seen[0] is schema:  # the registry hands out the same dict until the tool changes
            return seen[1]
        compact = compact_declaration(schema, name.partition("__")[2] or name)
        self._compacted[key] = (schema, compact)
        return compact

    def defers(self) -> bool:
        """Whether a model with native tool search gets deferred tools: ``search_tools`` is there to load them."""
        return self.discovery is not None and SEARCH_TOOL_NAME in self.registry

    def surfaced(self, shown: TurnScope, *, everything: bool = False) -> list[str]:
        """Internal tools ``shown`` makes visible that a deferring model loads by reference: those an
        active skill surfaces (not pinned, not ``search_tools``), in registration order; with
        ``everything``, the global ones too (for a model that loads on demand)."""
        return [
            name
            for tool in self.registry.visible_tools(shown)
            if (name := tool.spec.name) != SEARCH_TOOL_NAME
            and name not in shown.pinned
            and name not in shown.unlocked
            and (everything or self.registry.is_internal(name))
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
        """The tools given deferred in ``format`` this round: exactly those the scope lets the model load now.

        Of ``allowed`` (what ``search_tools`` could unlock, which layer 5 allows too, and
        what the active skill surfaces), those the list does not declare and that ``now``
        shows once loaded: the registry's own listing of ``now`` with them unlocked, the
        rule (layers 1-4) every call is checked by. They come in the order each was first
        deferred in the conversation, so that a scope seen before gives the same bytes
        as before. A tool the scope no longer allows is no longer sent at all, so no
        search, the provider's included, can load it; when and why it left is kept for
        the refusal of a call to it.
        """
        declared = set(self.names(format, strict))
        wanted = [name for name in dict.fromkeys(allowed) if name not in declared and name in self.registry]
        fresh = self.exports(now.with_unlocked(wanted), format, strict)
        given = [name for name in wanted if name in fresh]
        for name in given:
            self._deferred_order.setdefault(name, len(self._deferred_order))
            self._deferred_left.pop(name, None)
        earlier = self._deferred_now.get((format, strict), ())
        for name in set(earlier).difference(given, declared):
            if name in self.registry:
                self._deferred_left.setdefault(name, why_left(name, before, now))
        given.sort(key=self._deferred_order.__getitem__)
        self._deferred_now[(format, strict)] = tuple(given)
        return [fresh[name] for name in given]

    def refusal_note(self, name: str, scope: TurnScope) -> str | None:
        """What the refusal of a call to ``name`` adds when the model was given it earlier in the conversation
        and ``scope`` no longer allows it: when and why it left, and whether the tool list still declares it."""
        if name not in self.registry or self.registry.hidden_reason(name, scope) is None:
            return None
        canonical = self.registry.resolve(name)
        listed = next((lst.left[canonical] for lst in self._lists.values() if canonical in lst.left), None)
        if listed is not None:
            return (
                f"Tool {name!r} is still in your tool list but no longer in scope: {listed}. "
                "Calls to it are refused until it is in scope again."
            )
        left = self._deferred_left.get(canonical)
        if left is None:
            return None
        return (
            f"Tool {name!r} is no longer in scope: {left}. It is not among the tools you may load or call now, "
            "and calls to it are refused until it is in scope again."
        )


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
