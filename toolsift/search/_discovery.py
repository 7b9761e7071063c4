"""A conversation's discovery state: which tools it unlocked, which are pinned.

``search_tools`` is one registry tool shared by every conversation, but what it
unlocks belongs to the conversation that called it. The conversation makes its
:class:`Discovery` current while it runs tool calls (``with discovery.bound():``
or a call handler wrapped by :meth:`Discovery.wrap`); the tool finds it through
a ``ContextVar``. A context variable follows the call into the tool through
``registry.execute`` and any middleware, also into tasks started inside the
call, and never leaks to another conversation running in another task, which a
per-conversation copy of the tool or a field on a shared object could not
promise without changing the registry's calling convention.

Nothing here widens what a turn may see beyond layer 1: unlocked names go
into ``TurnScope.unlocked``, where layers 3 and 4 still apply; pinned names go
into ``TurnScope.pinned``, where the agent allowlist, the skill's
disallowed-tools and plan mode still apply; pinned tools that layer 5 refuses
are left out.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal, ParamSpec, TypeVar, final

from ..registry import Permissions, ToolRegistry, TurnScope
from ..registry._permissions import check_permissions

__all__ = ["Discovery", "UnlockMode"]

UnlockMode = Literal["turn", "conversation"]
MODES: tuple[UnlockMode, ...] = ("turn", "conversation")

P = ParamSpec("P")
R = TypeVar("R")

_CURRENT: ContextVar[Discovery | None] = ContextVar("toolsift_discovery", default=None)


@final
class Discovery:
    """What one conversation unlocked through ``search_tools``, plus its pinned tools.

    The conversation helper holds one per conversation and, in search mode:

    1. calls :meth:`begin_turn` when a user message arrives;
    2. builds every round's scope with :meth:`scope_for_turn` (its schema set
       then holds the global tools, ``search_tools``, the pinned tools and what
       was unlocked so far);
    3. runs tool calls inside :meth:`bound` (or through :meth:`wrap`), so that
       ``search_tools`` unlocks into this conversation.

    Args:
        registry: The registry whose tools are unlocked.
        mode: ``turn`` forgets unlocked tools at the next :meth:`begin_turn`;
            ``conversation`` keeps them until :meth:`reset`.
        pinned_tools: Canonical tool names in every turn's scope (``alwaysLoad``).
        pinned_servers: Servers (tool namespaces) whose every tool is pinned.
        permissions: The caller's layer-5 permissions; pinned tools they refuse
            are not offered.

    Raises:
        ValueError: ``mode`` is not ``turn`` or ``conversation``.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        mode: UnlockMode = "turn",
        pinned_tools: Iterable[str] = (),
        pinned_servers: Iterable[str] = (),
        permissions: Permissions | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unlock mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.registry = registry
        self.mode: UnlockMode = mode
        self.pinned_tools = frozenset(pinned_tools)
        self.pinned_servers = frozenset(pinned_servers)
        self.permissions = permissions or Permissions()
        self._unlocked: dict[str, None] = {}
        self._pinned_cache: tuple[int, frozenset[str]] | None = None

    @property
    def unlocked(self) -> frozenset[str]:
        """Names unlocked by ``search_tools`` and not yet forgotten."""
        return frozenset(self._unlocked)

    def unlock(self, names: Iterable[str]) -> list[str]:
        """Add ``names`` to the unlocked set; return those that were not in it yet.

        The caller (``search_tools``) passes only tools that layers 3-5 allow
        for its scope; :meth:`scope_for_turn` re-applies layers 3 and 4 anyway.
        """
        added = [name for name in dict.fromkeys(names) if name not in self._unlocked]
        self._unlocked.update(dict.fromkeys(added))
        return added

    def begin_turn(self) -> None:
        """Start a user turn: in ``turn`` mode, forget what the last turn unlocked."""
        if self.mode == "turn":
            self._unlocked.clear()

    def reset(self) -> None:
        """Forget every unlocked tool, whatever the mode."""
        self._unlocked.clear()

    def pinned(self) -> frozenset[str]:
        """Registered pinned tools that layer 5 allows (recomputed when the registry changes)."""
        generation = self.registry.generation
        if self._pinned_cache is not None and self._pinned_cache[0] == generation:
            return self._pinned_cache[1]
        names = {name for name in self.pinned_tools if name in self.registry}
        for server in self.pinned_servers:
            names.update(tool.spec.name for tool in self.registry.tools(server=server))
        allowed = frozenset(
            name for name in names
            if check_permissions(self.registry.get(name).spec, {}, self.permissions) is None
        )
        self._pinned_cache = (generation, allowed)
        return allowed

    def scope_for_turn(self, base: TurnScope) -> TurnScope:
        """``base`` with the pinned and unlocked tools surfaced (see ``TurnScope.pinned`` for the rules)."""
        return base.with_unlocked(self._unlocked.keys()).with_pinned(self.pinned())

    # -- making it current -----------------------------------------------------------------

    @staticmethod
    def current() -> Discovery | None:
        """The discovery state of the conversation whose tool call is running, if any."""
        return _CURRENT.get()

    @contextmanager
    def bound(self) -> Iterator[Discovery]:
        """Make this the current discovery state inside the ``with`` block."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)

    def wrap(self, handler: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        """A call handler (``registry.execute`` or a pipeline) that runs with this state bound."""

        async def bound_handler(*args: P.args, **kwargs: P.kwargs) -> R:
            with self.bound():
                return await handler(*args, **kwargs)

        return bound_handler

    def __repr__(self) -> str:
        return (f"Discovery(mode={self.mode!r}, unlocked={sorted(self._unlocked)!r}, "
                f"pinned_servers={sorted(self.pinned_servers)!r})")
