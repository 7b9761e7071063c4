"""A 2026-07-28 result without ``resultType`` is a complete one, as the spec says a client must read it.

MCP 2026-07-28 tags each result with ``resultType`` and tells clients to take a
missing tag as ``complete``; the SDK's client checks results against the
revision's wire schema, where the tag is required, and refuses the result
instead. :class:`ResultKinds` sits on a connection's two streams: it notes the
requests sent at 2026-07-28 (their ``_meta`` names the revision) and gives the
answers to those requests the tag they left out, before the SDK reads them.
Answers to requests of earlier revisions pass as they came.
"""

from __future__ import annotations

from typing import Any, final

from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError, JSONRPCRequest, JSONRPCResponse, RequestId
from mcp_types import PROTOCOL_VERSION_META_KEY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

__all__ = ["ResultKinds"]


@final
class ResultKinds:
    """The 2026-07-28 requests of one connection in flight, and the default tag of their answers."""

    def __init__(self) -> None:
        self._modern: set[RequestId] = set()

    def sent(self, item: SessionMessage) -> None:
        message = item.message
        if isinstance(message, JSONRPCRequest) and _revision(message.params) in MODERN_PROTOCOL_VERSIONS:
            self._modern.add(message.id)

    def received(self, item: SessionMessage) -> None:
        message = item.message
        if isinstance(message, JSONRPCResponse) and message.id in self._modern:
            self._modern.discard(message.id)
            message.result.setdefault("resultType", "complete")
        elif isinstance(message, JSONRPCError) and message.id is not None:
            self._modern.discard(message.id)


def _revision(params: dict[str, Any] | None) -> object:
    meta = (params or {}).get("_meta")
    return meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
