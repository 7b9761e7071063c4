"""A conversation's discovery state: which tools it unlocked, which are pinned.

``search_tools`` is one registry tool shared by every conversation, but what it
unlocks belongs to the conversation that called it. The conversation puts its
:class:`Discovery` in each call record (``discovery=discovery``, or a call
handler wrapped by :meth:`Discovery.wrap`); the tool finds it in its context
(``ctx.discovery``). The record carries it through every pipeline
stage into the tool, and it belongs to that one call: another conversation's
calls carry their own.

Nothing here widens what a turn may see beyond layer 1: unlocked names go
into ``TurnScope.unlocked``, where layers 3 and 4 still apply; pinned names go
into ``TurnScope.pinned``, where the agent allowlist, the skill's
disallowed-tools and plan mode still apply; pinned tools that layer 5 refuses
are left out.

What the context holds stays bounded: the unlocked set is capped in tools and
in (estimated) tokens, and unlocking past the cap evicts the least recently
used tool, unlocked or called longest ago. With ``offer_search``,
``search_tools`` itself is pinned only in turns that have something to find:
no skill that names its tools (``allowed-tools``) is active, and the catalogue
holds internal tools of searchable servers that the agent may see. A skill
without ``allowed-tools`` restricts nothing, search included.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace
from typing import Literal, final

from .._names import SEARCH_TOOL_NAME, split_name
from .._tokens import estimated_tokens as text_tokens
from ..config import ServerConfig
from ..config._internal import AgentConfig
from ..registry import CallHandler, CallRecord, Permissions, ToolRegistry, ToolResult, TurnScope
from ..registry._internal import check_permissions

__all__ = ["Discovery", "UnlockMode", "Unlocked", "estimated_tokens", "unlock_denial"]

DEFAULT_MAX_TOOLS = 16
DEFAULT_MAX_TOKENS = 10_000

UnlockMode = Literal["turn", "conversation"]
MODES: tuple[UnlockMode, ...] = ("turn", "conversation")


def estimated_tokens(registry: ToolRegistry, name: str) -> int:
    """About how many tokens the tool's declaration costs a turn (its JSON, 4 bytes a token)."""
    spec = registry.spec(name)
    declaration = {"name": spec.name, "description": spec.description, "parameters": spec.input_schema}
    return max(1, text_tokens(json.dumps(declaration, ensure_ascii=False)))


def unlock_denial(
    registry: ToolRegistry, name: str, scope: TurnScope, permissions: Permissions
) -> tuple[int, str] | None:
    """Why ``name`` could not be called once unlocked in ``scope`` (layers 3-5), as (layer, reason), or None.

    The one rule for what ``search_tools`` may unlock and what a model with
    native tool search may be given deferred (:meth:`Discovery.findable`).
    """
    denial = registry.hidden_reason(name, scope.with_unlocked((name,)))
    if denial is None:
        refusal = check_permissions(registry.spec(name), {}, permissions, names=registry.names(name))
        denial = (5, refusal) if refusal is not None else None
    return denial


@dataclass(frozen=True)
class Unlocked:
    """What one :meth:`Discovery.unlock` changed.

    Attributes:
        added: Names that were not unlocked before.
        evicted: Names the caps pushed out (least recently used first).
    """

    added: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)


@final
class Discovery:
    """What one conversation unlocked through ``search_tools``, plus its pinned tools.

    The conversation helper holds one per conversation and, in search mode:

    1. calls :meth:`begin_turn` when a user message arrives;
    2. builds every round's scope with :meth:`scope_for_turn` (its schema set
       then holds the global tools, ``search_tools``, the pinned tools and what
       was unlocked so far);
    3. runs tool calls with itself as the call record's ``discovery`` (or through
       :meth:`wrap`), so that ``search_tools`` unlocks into this conversation.

    Args:
        registry: The registry whose tools are unlocked.
        mode: ``turn`` forgets unlocked tools at the next :meth:`begin_turn`;
            ``conversation`` keeps them until :meth:`reset`.
        pinned_tools: Canonical tool names in every turn's scope (``alwaysLoad``).
        pinned_servers: Servers (tool namespaces) whose every tool is pinned, or a
            function giving them, asked again whenever the registry changed (a
            toolbox passes the servers in force, so a reload's ``alwaysLoad``
            servers count in conversations that started before it).
        permissions: The caller's layer-5 permissions; pinned tools they refuse
            are not offered.
        max_tools: Unlocked tools kept at most (None: no cap).
        max_tokens: Estimated tokens of the unlocked tools' declarations kept at
            most (None: no cap); the tool unlocked last is kept even if it alone
            is larger.
        offer_search: Pin ``search_tools`` in the turns that have something to
            find (see the module docs).
        unsearchable: Servers whose tools do not count for ``offer_search``, asked each time.

    Raises:
        ValueError: ``mode`` is not ``turn`` or ``conversation``, or a cap is below 1.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        mode: UnlockMode = "turn",
        pinned_tools: Iterable[str] = (),
        pinned_servers: Iterable[str] | Callable[[], Iterable[str]] = (),
        permissions: Permissions | None = None,
        max_tools: int | None = DEFAULT_MAX_TOOLS,
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        offer_search: bool = False,
        unsearchable: Callable[[], Collection[str]] = frozenset,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unlock mode must be one of {', '.join(MODES)}, got {mode!r}")
        if (max_tools is not None and max_tools < 1) or (max_tokens is not None and max_tokens < 1):
            raise ValueError(
                f"max_tools and max_tokens must be at least 1 (or None), got max_tools={max_tools!r}, "
                f"max_tokens={max_tokens!r}"
            )
        self.registry = registry
        self.mode: UnlockMode = mode
        self.pinned_tools = frozenset(pinned_tools)
        self._pinned_servers = pinned_servers if callable(pinned_servers) else frozenset(pinned_servers)
        self.permissions = permissions or Permissions()
        self.max_tools = max_tools
        self.max_tokens = max_tokens
        self.offer_search = offer_search
        self._unsearchable = unsearchable
        # Name -> estimated tokens, least recently used first.
        self._unlocked: OrderedDict[str, int] = OrderedDict()
        self._pinned_cache: tuple[int, frozenset[str]] | None = None
        self._findable: dict[tuple[int, TurnScope, frozenset[str]], bool] = {}
        self._deferrable: tuple[tuple[int, TurnScope, frozenset[str]], tuple[str, ...]] | None = None

    @property
    def pinned_servers(self) -> frozenset[str]:
        """The servers whose every tool is pinned, now."""
        source = self._pinned_servers
        return frozenset(source()) if callable(source) else source

    @property
    def unlocked(self) -> frozenset[str]:
        """Names unlocked by ``search_tools`` and not yet forgotten."""
        return frozenset(self._unlocked)

    @property
    def recent(self) -> tuple[str, ...]:
        """The unlocked names, least recently used first (what :meth:`restore` takes back)."""
        return tuple(self._unlocked)

    def restore(self, names: Iterable[str]) -> None:
        """Make ``names`` (least recently used first) the unlocked set, skipping tools no longer registered."""
        wanted = tuple(name for name in names if name in self.registry)
        if wanted != self.recent:
            self._unlocked.clear()
            self.unlock(wanted)

    @property
    def unlocked_tokens(self) -> int:
        """Estimated tokens of the unlocked tools' declarations."""
        return sum(self._unlocked.values())

    def unlock(self, names: Iterable[str]) -> Unlocked:
        """Unlock ``names`` (most recently used from now on), then evict past the caps.

        The caller (``search_tools``) passes only tools that layers 3-5 allow
        for its scope; :meth:`scope_for_turn` re-applies layers 3 and 4 anyway.
        """
        added = []
        for name in dict.fromkeys(names):
            if name in self._unlocked:
                self._unlocked.move_to_end(name)
            else:
                self._unlocked[name] = estimated_tokens(self.registry, name)
                added.append(name)
        evicted = []
        while len(self._unlocked) > 1 and (
            (self.max_tools is not None and len(self._unlocked) > self.max_tools)
            or (self.max_tokens is not None and self.unlocked_tokens > self.max_tokens)
        ):
            evicted.append(self._unlocked.popitem(last=False)[0])
        return Unlocked([name for name in added if name in self._unlocked], evicted)

    def touch(self, name: str) -> None:
        """Mark an unlocked tool as just used (a call), so it is evicted last."""
        if name in self._unlocked:
            self._unlocked.move_to_end(name)

    def begin_turn(self) -> None:
        """Start a user turn: in ``turn`` mode, forget what the last turn unlocked."""
        if self.mode == "turn":
            self._unlocked.clear()

    def reset(self) -> None:
        """Forget every unlocked tool, whatever the mode."""
        self._unlocked.clear()

    def pinned(self) -> frozenset[str]:
        """Registered pinned tools that layer 5 allows (recomputed when the registry changes).

        With ``offer_search``, ``search_tools`` is among them; :meth:`scope_for_turn`
        leaves it out of the turns that have nothing to find.
        """
        generation = self.registry.generation
        if self._pinned_cache is not None and self._pinned_cache[0] == generation:
            return self._pinned_cache[1]
        wanted = self.pinned_tools | ({SEARCH_TOOL_NAME} if self.offer_search else set())
        names = {name for name in wanted if name in self.registry}
        for server in self.pinned_servers:
            names.update(tool.spec.name for tool in self.registry.tools(server=server))
        allowed = frozenset(
            name
            for name in names
            if check_permissions(self.registry.get(name).spec, {}, self.permissions, names=self.registry.names(name))
            is None
        )
        self._pinned_cache = (generation, allowed)
        return allowed

    def scope_for_turn(self, base: TurnScope) -> TurnScope:
        """``base`` with the pinned and unlocked tools surfaced (see ``TurnScope.pinned`` for the rules)."""
        pinned = self.pinned()
        if (
            self.offer_search
            and SEARCH_TOOL_NAME not in self.pinned_tools
            and not (not base.skill_allowed and self._has_hidden_tools(base))
        ):
            pinned = pinned - {SEARCH_TOOL_NAME}
        return base.with_unlocked(self._unlocked.keys()).with_pinned(pinned)

    def findable(self, scope: TurnScope) -> list[str]:
        """The tools ``search_tools`` could unlock in ``scope``, in registration order.

        Those of searchable servers that ``scope`` does not show and that layers
        3-5 allow once unlocked (:func:`unlock_denial`): what a model with native
        tool search is given deferred. Only internal tools qualify (a global tool
        ``scope`` hides stays hidden by layer 3 or 4 when unlocked), so only they
        are looked at.
        """
        hidden = frozenset(self._unsearchable())
        key = (self.registry.generation, scope, hidden)
        if self._deferrable is not None and self._deferrable[0] == key:
            return list(self._deferrable[1])
        registry = self.registry
        names = [
            name
            for tool in registry.tools(internal=True)
            if (name := tool.spec.name) != SEARCH_TOOL_NAME
            and split_name(name)[0] not in hidden
            and tool.spec.server not in hidden
            and registry.hidden_reason(name, scope) is not None
            and unlock_denial(registry, name, scope, self.permissions) is None
        ]
        self._deferrable = (key, tuple(names))  # one scope at a time: a conversation asks once per round
        return names

    def _has_hidden_tools(self, base: TurnScope) -> bool:
        """Whether the catalogue holds internal tools of searchable servers that layer 3 lets ``base`` see."""
        hidden = frozenset(self._unsearchable())
        key = (self.registry.generation, TurnScope(agent_allowed=base.agent_allowed, agent=base.agent), hidden)
        found = self._findable.get(key)
        if found is None:
            agent = key[1].agent_patterns
            found = any(
                split_name(tool.spec.name)[0] not in hidden
                and tool.spec.server not in hidden
                and tool.spec.name != SEARCH_TOOL_NAME
                and (agent is None or agent.matches(tool.spec.name))
                for tool in self.registry.tools(internal=True)
            )
            self._findable = {key: found}  # one registry state at a time
        return found

    @classmethod
    def for_agent(
        cls,
        registry: ToolRegistry,
        agent: AgentConfig,
        *,
        permissions: Permissions,
        servers: Callable[[], Iterable[ServerConfig]],
        unsearchable: Callable[[], Collection[str]] = frozenset,
    ) -> Discovery:
        """The discovery state an agent profile asks for: its unlock mode, caps and ``toolDiscovery``.

        ``servers`` gives the servers in force (asked at every turn, so a reload's
        ``alwaysLoad`` servers count).
        """
        return cls(
            registry,
            mode=agent.unlock,
            pinned_tools={SEARCH_TOOL_NAME} if agent.tool_discovery == "search" else (),
            pinned_servers=lambda: [config.namespace for config in servers() if config.always_load],
            permissions=permissions,
            max_tools=agent.max_unlocked_tools,
            max_tokens=agent.max_unlocked_tokens,
            offer_search=agent.tool_discovery == "auto",
            unsearchable=unsearchable,
        )

    # -- handing it to search_tools -------------------------------------------------------

    def wrap(self, handler: CallHandler) -> CallHandler:
        """``handler`` with this state in every call's record; a call of an unlocked tool counts as use."""

        async def with_discovery(call: CallRecord) -> ToolResult:
            self.touch(call.name)
            return await handler(replace(call, discovery=self))

        return with_discovery

    def __repr__(self) -> str:
        return (
            f"Discovery(mode={self.mode!r}, unlocked={sorted(self._unlocked)!r}, "
            f"pinned_servers={sorted(self.pinned_servers)!r})"
        )
