"""``PermissionFilter``: every call runs as one profile, whatever the caller claims.

The five layers themselves are checked by ``ToolRegistry.execute``; this
stage decides *whose* layers 3 and 5 apply. A server runs as the agent
profile it was started with: the profile's ``allowed_tools`` replace the
call's agent layer, its permissions replace the call's, and its plan mode
is added to the call's. The skill layer (4) the call carries is kept, which
is how a gateway narrows itself to a skill's patterns. Refusals come back
from the registry as error results (see ``RegistryHandler``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import final

from ..registry import CallHandler, CallRecord, Permissions, ToolResult, TurnScope
from ._checkpoint import Checkpoint

__all__ = ["PermissionFilter", "profile_scope"]

# Calls carry a handful of distinct scopes (one per tool source); past this many, the cache restarts.
_SCOPE_CACHE_SIZE = 64


def profile_scope(
    scope: TurnScope, *, agent: str | None, allowed_tools: Sequence[str] | None, plan_mode: bool = False
) -> TurnScope:
    """``scope`` as a profile sees it: the profile's agent layer, plus its plan mode.

    What a server lists must be built with the same function its calls are
    checked with, or a client would be shown tools it cannot call.
    """
    return replace(
        scope,
        agent_allowed=tuple(allowed_tools) if allowed_tools is not None else None,
        agent=agent,
        read_only=scope.read_only or plan_mode,
    )


@final
class PermissionFilter(Checkpoint):
    """Puts a profile's agent layer, permissions and plan mode on every call.

    Args:
        handler: The next stage.
        agent: The profile's name, for audit records.
        allowed_tools: Layer 3, the profile's tool globs; None: no limit.
        permissions: Layer 5, the profile's permissions.
        plan_mode: Allow read-only tools only.

    Raises:
        InvalidPattern: When an ``allowed_tools`` glob is invalid.
    """

    def __init__(
        self,
        handler: CallHandler,
        *,
        agent: str | None = None,
        allowed_tools: Sequence[str] | None = None,
        permissions: Permissions | None = None,
        plan_mode: bool = False,
    ) -> None:
        super().__init__(handler)
        self._agent = agent
        self._allowed = tuple(allowed_tools) if allowed_tools is not None else None
        self._permissions = permissions if permissions is not None else Permissions()
        self._plan_mode = plan_mode
        # Fail here, naming the profile, rather than on the first call.
        self._scopes: dict[TurnScope, TurnScope] = {}
        self.scope_for(TurnScope())

    def scope_for(self, scope: TurnScope) -> TurnScope:
        """``scope`` with the profile's agent layer and plan mode applied."""
        profiled = self._scopes.get(scope)
        if profiled is None:
            if len(self._scopes) >= _SCOPE_CACHE_SIZE:
                self._scopes.clear()
            profiled = self._scopes[scope] = profile_scope(
                scope, agent=self._agent, allowed_tools=self._allowed, plan_mode=self._plan_mode
            )
        return profiled

    def enter(self, call: CallRecord) -> CallRecord | ToolResult:
        return replace(call, scope=self.scope_for(call.scope), permissions=self._permissions)
