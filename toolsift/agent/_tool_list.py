"""A conversation's declared tool list, stable from round to round so that the provider's prompt cache holds.

Providers cache the request prefix: tools, then the system prompt, then the
messages. A byte that changes early makes everything after it full price. A
tool list rebuilt from each round's scope changes whenever the scope does (a
skill switch, an unlock that expires), so this list changes only where it must:

- tools come in the order they first entered the conversation's scope; a new
  one is appended at the end; a tool whose schema changed is replaced where it stands;
- a tool that leaves the scope (``/unuse``, a skill switch, an expired unlock)
  stays declared, and a call to it is refused by the registry's layers, which
  check the live scope; the refusal says when and why it left;
- unless removing it is cheaper, by :class:`KeepRule`; the list is then sent in
  the order its tools first entered the scope, so that a scope the conversation
  had before gives the same bytes as before (the provider may still hold them);
  a tool no longer registered is removed (there is nothing left to call).

Declarations reach the model in their compact form (``_compact``).

Only tools the scope allowed at some point in the conversation are ever
declared, in the format (and strict mode) the registry exported them in.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, final

from .._tokens import estimated_tokens as text_tokens

__all__ = ["HOLD", "KeepRule", "LoadRule", "StableToolList", "common_length", "estimated_tokens"]

#: What a cache read and a cache write cost per input token, relative to an uncached one:
#: Anthropic's published prices (reads 0.1x, 5-minute writes 1.25x). OpenAI reads cost 0.1x-0.5x
#: with no write premium, so removal is cheaper there; these constants err on the side of keeping.
READ_COST = 0.1
WRITE_COST = 1.25
#: Tools kept before are removed only once keeping them costs this many times the removal: the rewrite
#: is then paid back twice over by the estimate, and an estimate off by half still breaks even.
HOLD = 2.0


def estimated_tokens(value: Any) -> int:
    """About how many input tokens ``value`` costs as JSON (a string as its text)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text_tokens(text)


@dataclass(frozen=True)
class KeepRule:
    """Whether to keep declaring tools that left the scope: the rule's inputs and its answer.

    Keeping ``left_tokens`` of schemas costs a cache read on each later request:
    ``read_cost * left_tokens * expected_requests``. Removing them makes the
    provider write again, once, what follows the first changed tool: the tools
    that stay after it and the system prompt and messages, but not the removed
    tools, which are no longer sent: ``(write_cost - read_cost) * rewritten_tokens``
    (the write premium over the read that request would have paid anyway).
    Keep while the first is smaller.

    ``expected_requests`` is the number of model requests the conversation has
    made so far (at least 1): knowing nothing else of a conversation that has
    lasted n requests, it is as likely to be in its first half as in its second
    (the Copernican estimate), so about n more are to come. ``rewritten_tokens``
    counts only what removal adds: when the same round appends a tool or a
    schema changed earlier in the list, the prefix from there on is rewritten
    anyway, and removing tools at or after that point costs nothing more. So a
    skill switch, which appends the new skill's tools, removes the old skill's
    for free, while tools that left a list that is otherwise unchanged stay until
    ``expected_requests`` exceeds ``11.5 * rewritten_tokens / left_tokens`` (Anthropic's prices).

    A rule that kept tools before removes them only once keeping costs ``hold`` times
    the removal (:data:`HOLD`): the estimate of requests to come is rough, and a
    decision that flips on a small margin pays a rewrite for savings it may never see.

    Attributes:
        left: Canonical names of the declared tools the scope no longer allows.
        left_tokens: Their schemas' estimated tokens.
        rewritten_tokens: Estimated prefix tokens removal would make the provider write again.
        expected_requests: Requests expected from here on.
        read_cost: A cache read's price per token (1.0 = uncached input).
        write_cost: A cache write's price per token.
        hold: How many times the removal cost keeping must cost before tools are removed.
    """

    left: tuple[str, ...]
    left_tokens: int
    rewritten_tokens: int
    expected_requests: int
    read_cost: float = READ_COST
    write_cost: float = WRITE_COST
    hold: float = 1.0

    @property
    def keep_cost(self) -> float:
        """What keeping them costs over the expected requests, in uncached-token units."""
        return self.read_cost * self.left_tokens * self.expected_requests

    @property
    def removal_cost(self) -> float:
        """What removing them costs now, in uncached-token units."""
        return (self.write_cost - self.read_cost) * self.rewritten_tokens

    @property
    def keep(self) -> bool:
        """Whether keeping them is the cheaper choice (by ``hold`` times, when they were kept before)."""
        return self.keep_cost < self.hold * self.removal_cost


@dataclass(frozen=True)
class LoadRule:
    """How a model that defers tools gets the tools a skill surfaces at ``/use``: by reference or up front.

    Loaded by reference (a ``search_tools`` exchange appended to the messages),
    ``tool_tokens`` of definitions stay in the prompt for the rest of the
    conversation: the provider expands a reference where it sits and has no
    unload, so they cost a cache read on every later request,
    ``read_cost * tool_tokens * expected_requests``. Appended to the tool list
    instead, they make the provider write again everything after the end of
    the list once, ``(write_cost - read_cost) * rewritten_tokens`` (the system
    prompt and the messages so far: the premium over the read that request pays
    anyway). Either way the definitions are written once, and they are read
    while the skill is active; what differs is that tools up front leave the
    list again when :class:`KeepRule` finds that cheaper, where a reference
    stays. Load by reference while its reads cost less than the rewrite.
    ``expected_requests`` is estimated as for :class:`KeepRule` (requests so far).

    Attributes:
        skill: The skill whose tools these are (None: the conversation's scope).
        tools: Canonical names of its tools neither loaded nor declared yet (the others cost nothing more).
        tool_tokens: Their definitions' estimated tokens.
        rewritten_tokens: Estimated tokens after the tool list: system prompt and messages.
        expected_requests: Requests expected from here on.
        read_cost: A cache read's price per token (1.0 = uncached input).
        write_cost: A cache write's price per token.
    """

    skill: str | None
    tools: tuple[str, ...]
    tool_tokens: int
    rewritten_tokens: int
    expected_requests: int
    read_cost: float = READ_COST
    write_cost: float = WRITE_COST

    @property
    def reference_cost(self) -> float:
        """What loading them by reference costs over the expected requests, in uncached-token units."""
        return self.read_cost * self.tool_tokens * self.expected_requests

    @property
    def up_front_cost(self) -> float:
        """What appending them to the tool list costs now, in uncached-token units."""
        return (self.write_cost - self.read_cost) * self.rewritten_tokens

    @property
    def by_reference(self) -> bool:
        """Whether loading them by reference is the cheaper choice."""
        return self.reference_cost < self.up_front_cost


@final
class StableToolList:
    """One conversation's declared tools in one wire format.

    Args:
        read_cost: See :class:`KeepRule`.
        write_cost: See :class:`KeepRule`.

    Attributes:
        decisions: The rules applied (:class:`KeepRule`), oldest first: one each time the
            set of tools that left the scope, or the rule's answer, changed.
        left: Declared tools the scope no longer allows, with when and why they left.
    """

    def __init__(self, *, read_cost: float = READ_COST, write_cost: float = WRITE_COST) -> None:
        self._read_cost = read_cost
        self._write_cost = write_cost
        self._schemas: dict[str, dict[str, Any]] = {}  # canonical name -> schema, in declared order
        self._entered: dict[str, int] = {}  # canonical name -> when it first entered the scope (0, 1, ...)
        self.decisions: list[KeepRule] = []
        self.left: dict[str, str] = {}

    @property
    def names(self) -> tuple[str, ...]:
        """The declared canonical names, in order."""
        return tuple(self._schemas)

    def update(
        self,
        in_scope: Iterable[tuple[str, dict[str, Any]]],
        *,
        registered: Callable[[str], bool],
        why_left: Callable[[str], str],
        tail_tokens: int,
        requests: int,
    ) -> list[dict[str, Any]]:
        """Take the scope's tools for this round; return the declared list.

        When the rule removes tools, the list is sent again from the first
        removed tool on (or from where this round breaks it anyway, if earlier),
        and from there the tools come in the order they first entered the scope:
        a scope the conversation had before (``/unuse`` after ``/use``) gives the
        bytes it gave then, and the provider reads the cache entry written then.

        Args:
            in_scope: (canonical name, schema) of every tool the scope allows now, in the registry's order.
            registered: Whether a name is still registered.
            why_left: Says when and why a tool that leaves now left (asked only then).
            tail_tokens: Estimated tokens after the tools: system prompt and messages.
            requests: Model requests made so far in the conversation.
        """
        now = dict(in_scope)
        for name in now:
            self._entered.setdefault(name, len(self._entered))
        old = [name for name in self._schemas if name in now or registered(name)]
        self._schemas = {name: self._schemas[name] for name in old}
        # Where this round's prefix breaks anyway: a schema changed in place, or tools appended at the end.
        changed = [i for i, name in enumerate(old) if name in now and now[name] != self._schemas[name]]
        appended = any(name not in self._schemas for name in now)
        breaks = min(changed + ([len(old)] if appended else []), default=None)
        self._schemas.update(now)
        left = tuple(name for name in old if name not in now)
        for name in list(self.left):
            if name not in left:
                del self.left[name]
        if not left:
            return list(self._schemas.values())
        fresh = [name for name in left if name not in self.left]
        self.left.update({name: why_left(name) for name in fresh})
        gone = set(left)
        order = sorted((name for name in self._schemas if name not in gone), key=self._entered.__getitem__)
        rule = self._rule(old, left, order, breaks, tail_tokens, requests)
        if self.decisions and self.decisions[-1].keep and set(self.decisions[-1].left) <= set(left):
            rule = replace(rule, hold=HOLD)  # kept before: removing now must pay off by a margin
        if not self.decisions or (self.decisions[-1].left, self.decisions[-1].keep) != (left, rule.keep):
            self.decisions.append(rule)
        if not rule.keep:
            self._schemas = {name: self._schemas[name] for name in order}
            self.left.clear()
        return list(self._schemas.values())

    def _rule(
        self, old: list[str], left: tuple[str, ...], order: list[str], breaks: int | None, tail: int, requests: int
    ) -> KeepRule:
        """The rule for removing ``left`` from ``old``, which leaves ``order``; ``breaks``: where this round's
        list departs from ``old`` anyway (None: nowhere)."""
        same = common_length(old, order)
        if breaks is not None and breaks <= same:
            rewritten = 0
        else:
            anyway = set(old[breaks:]) if breaks is not None else set()  # changed schemas are written anyway
            again = [name for name in order[same:] if name in old and name not in anyway]
            rewritten = sum(estimated_tokens(self._schemas[name]) for name in again)
            rewritten += tail if breaks is None else 0
        return KeepRule(
            left=left,
            left_tokens=sum(estimated_tokens(self._schemas[name]) for name in left),
            rewritten_tokens=rewritten,
            expected_requests=max(1, requests),
            read_cost=self._read_cost,
            write_cost=self._write_cost,
        )


def common_length(a: Sequence[str], b: Sequence[str]) -> int:
    """How many leading items ``a`` and ``b`` share."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
