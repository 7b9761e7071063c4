"""What upstream servers ask while the gateway serves a call goes to the MCP client that made the call.

An upstream server's ``sampling/createMessage`` and ``elicitation/create``
reach toolsift's session with no word of which downstream call caused them
(on a handshake-era connection they arrive on the session's own reader). The
relay keeps the downstream calls in flight per server: a request goes to the
client whose call runs on that server, and is refused when there is none, or
when calls of two different clients run there at once (answering for the
wrong person is worse than not answering). Log messages go to that client
too, or, outside calls, to clients that set a log level.

Requests reach downstream clients of the handshake era mid-call; a
2026-07-28 client cannot be sent requests mid-call, so they are refused with
that reason. Such a client's calls reach an upstream over the 2026-07-28
connection wherever the session has one (``_passthrough``), where the server
asks by ``InputRequiredResult`` instead; the refusal is left for an upstream
reached in the handshake era alone (a stdio server, under ``protocol: auto``).

Which call a request belongs to is known exactly in one case: a 2026-07-28
upstream server asks by ``InputRequiredResult``, and the SDK's ``Client``
answers it through the client's callbacks inside the task that made the call,
with nothing in the callback's arguments that names the call. The task is the
only thing that tells, so the relay keeps the call it serves in a context
variable, the one piece of per-call state that does not travel in the call
record: the record reaches the tool, but the SDK sits between the tool and
this callback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

import mcp.types as types
from mcp import MCPError
from mcp.server.connection import allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.shared.message import ServerMessageMetadata
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from ..mcp_sessions import ClientCallbacks

__all__ = ["ClientRelay"]

R = TypeVar("R", bound=BaseModel)
_LEVELS: tuple[types.LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


@dataclass(frozen=True, eq=False)
class _Call:
    """One downstream call being served: its session proxy, request id, and the log levels its request asked for.

    At 2026-07-28 a request gets log messages only when its ``_meta`` names a level (and then that level
    and above); a handshake-era one gets every level, filtered by its ``logging/setLevel``.
    """

    session: ServerSession
    request_id: types.RequestId | None
    log_levels: frozenset[types.LoggingLevel] = frozenset(_LEVELS)

    @property
    def client(self) -> object:
        return client_of(self.session)


def client_of(session: ServerSession) -> object:
    """The downstream connection a request came on; requests of one client share it.

    The SDK builds a ``ServerSession`` per request and keeps the connection
    private; it is the one thing that tells two clients apart.
    """
    return getattr(session, "_connection", session)


def _refusal(message: str) -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message=message)


class ClientRelay:
    """Relays upstream servers' requests and notifications to downstream MCP clients."""

    def __init__(self) -> None:
        self._calls: dict[str, list[_Call]] = {}
        self._current: ContextVar[_Call | None] = ContextVar("toolsift_relay_call", default=None)
        self._listeners: dict[object, tuple[ServerSession, types.LoggingLevel]] = {}
        self._subscribers: dict[str, dict[object, ServerSession]] = {}

    def callbacks(self) -> ClientCallbacks:
        """Session callbacks that relay; log messages are asked for at every level and filtered downstream."""
        return ClientCallbacks(
            sampling=self._sample,
            elicitation=self._elicit,
            logging=self._log,
            resource_updated=self._updated,
            log_level="debug",
        )

    @contextmanager
    def calling(self, server: str, ctx: ServerRequestContext[Any]) -> Iterator[None]:
        """Mark a downstream call of ``server``'s tool as running while the block runs."""
        call = _Call(ctx.session, ctx.request_id, allowed_log_levels(ctx.protocol_version, ctx.meta))
        calls = self._calls.setdefault(server, [])
        calls.append(call)
        token = self._current.set(call)
        try:
            yield
        finally:
            self._current.reset(token)
            calls.remove(call)
            if not calls:
                del self._calls[server]

    def listen(self, ctx: ServerRequestContext[Any], level: types.LoggingLevel) -> None:
        """Send log messages at ``level`` and above to this client, also outside its calls."""
        self._listeners[client_of(ctx.session)] = (ctx.session, level)

    def subscribe(self, ctx: ServerRequestContext[Any], uri: str) -> None:
        """Send this client ``notifications/resources/updated`` for ``uri``."""
        self._subscribers.setdefault(uri, {})[client_of(ctx.session)] = ctx.session

    def unsubscribe(self, ctx: ServerRequestContext[Any], uri: str) -> bool:
        """Stop the updates of ``uri`` to this client; whether no other client still wants them."""
        subscribers = self._subscribers.get(uri, {})
        subscribers.pop(client_of(ctx.session), None)
        if subscribers:
            return False
        self._subscribers.pop(uri, None)
        return True

    def _target(self, server: str) -> _Call | types.ErrorData:
        current = self._current.get()
        if current is not None:
            return current
        calls = self._calls.get(server, [])
        if not calls:
            return _refusal(f"MCP server {server!r} asked outside of a call from a client; nobody to ask")
        if len({id(call.client) for call in calls}) > 1:
            return _refusal(
                f"calls of several clients run on MCP server {server!r}; the gateway cannot tell "
                "whose call this request belongs to, so it is refused"
            )
        return calls[-1]

    async def _request(
        self,
        server: str,
        request: types.ServerRequest,
        result: type[R],
        capability: types.ClientCapabilities,
        what: str,
    ) -> R | types.ErrorData:
        call = self._target(server)
        if isinstance(call, types.ErrorData):
            return call
        if call.session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return _refusal(
                f"MCP server {server!r} asked for {what}, which the gateway cannot pass to a "
                f"{call.session.protocol_version} client in the middle of a call"
            )
        if not call.session.check_client_capability(capability):
            return _refusal(f"MCP server {server!r} asked for {what}, and the client has no {what} capability")
        try:
            return await call.session.send_request(request, result, metadata=self._metadata(call))
        except MCPError as exc:
            return exc.error

    @staticmethod
    def _metadata(call: _Call) -> ServerMessageMetadata | None:
        return ServerMessageMetadata(related_request_id=call.request_id) if call.request_id is not None else None

    async def _sample(
        self, server: str, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        return await self._request(
            server,
            types.CreateMessageRequest(params=params),
            types.CreateMessageResult,
            types.ClientCapabilities(sampling=types.SamplingCapability()),
            "sampling",
        )

    async def _elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        # A bare `elicitation: {}` declares form support; URL requests need the url capability.
        capability = (
            types.ElicitationCapability(url=types.UrlElicitationCapability())
            if isinstance(params, types.ElicitRequestURLParams)
            else types.ElicitationCapability()
        )
        return await self._request(
            server,
            types.ElicitRequest(params=params),
            types.ElicitResult,
            types.ClientCapabilities(elicitation=capability),
            "elicitation",
        )

    async def _log(self, server: str, params: types.LoggingMessageNotificationParams) -> None:
        notification = types.LoggingMessageNotification(params=params)
        call = self._target(server)
        if not isinstance(call, types.ErrorData):
            if params.level not in call.log_levels:
                return  # the call's request asked for no log messages at this level
            with suppress(Exception):  # a client gone mid-call loses its log line, nothing else
                await call.session.send_notification(notification, related_request_id=call.request_id)
            return
        rank = _LEVELS.index(params.level) if params.level in _LEVELS else 0
        for client, (session, level) in list(self._listeners.items()):
            if rank >= _LEVELS.index(level):
                try:
                    await session.send_notification(notification)
                except Exception:
                    self._listeners.pop(client, None)  # its connection is gone

    async def _updated(self, server: str, uri: str) -> None:
        subscribers = self._subscribers.get(uri, {})
        for client, session in list(subscribers.items()):
            try:
                await session.send_resource_updated(uri)
            except Exception:
                subscribers.pop(client, None)  # its connection is gone
