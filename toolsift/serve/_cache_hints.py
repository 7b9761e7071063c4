"""Cache hints (SEP-2549) on every list and read ``toolsift serve`` answers at MCP 2026-07-28.

At 2026-07-28 a cacheable result carries ``ttlMs`` (how long a client may
keep it) and ``cacheScope``: ``public`` lets any cache, a shared gateway's
too, serve it to every caller; ``private`` keeps it within one authorization
context. The SDK fills both on the core results a handler leaves them off
(``0`` and ``private``); the Skills extension's results (``skills/list``,
``skills/get``), which the SDK does not know, extend the same cacheable
result. :class:`CacheHints` is server middleware that sees every answer
after it is shaped for the wire and:

- gives a result without hints ``ttlMs: 0`` (what is served follows config
  and skill edits, announced on listen streams) and the endpoint's scope;
- makes the scope ``private`` where the list depends on who asks: the server
  is guarded by a token (each caller's credentials), or the request came to a
  scoped endpoint (``/mcp/skills/<name>``, ``/mcp/agents/<name>``), whose
  lists are not the main endpoint's. A scope is never widened: a ``private``
  result (an upstream's, or the SDK's default) stays private.
"""

from __future__ import annotations

from typing import Any, Literal, final

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types.methods import CACHEABLE_METHODS, is_input_required
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ._endpoints import EndpointKey

__all__ = ["CACHED_METHODS", "CacheHints"]

# The core cacheable methods and the Skills extension's, whose results extend CacheableResult.
CACHED_METHODS = frozenset({*CACHEABLE_METHODS, "skills/list", "skills/get"})
CacheScope = Literal["public", "private"]


@final
class CacheHints:
    """Server middleware stamping ``ttlMs`` and ``cacheScope`` on 2026-07-28 cacheable results.

    Args:
        guarded: A token guards the server, so every answer is per caller (``private``).
    """

    def __init__(self, *, guarded: bool) -> None:
        self._guarded = guarded

    def scope(self, ctx: ServerRequestContext[Any, Any]) -> CacheScope:
        """The widest scope a result of this request may have."""
        scoped = EndpointKey.of(ctx.request).kind != "main"
        return "private" if self._guarded or scoped else "public"

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if (
            ctx.method not in CACHED_METHODS
            or ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
            or not isinstance(result, dict)
            or is_input_required(result)
        ):
            return result
        widest = self.scope(ctx)
        given = result.get("cacheScope")
        hinted: dict[str, Any] = {"ttlMs": 0, **result}
        hinted["cacheScope"] = "private" if "private" in (widest, given) else widest
        return hinted
