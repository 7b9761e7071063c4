"""``SharedSessionManager``: Streamable HTTP sessions that any replica of a gateway can serve.

It takes the SDK session manager's place when ``serve.shared`` is set. A
session opened on one replica is recorded in Redis (the client's
``initialize`` parameters and the negotiated version; written again by the
replicas holding it when Redis loses it, :mod:`._records`); a request for it that
lands on another replica makes that replica *adopt* it: a transport with the
same session id and an SDK connection born initialized from the record. From
then on each replica serves the requests it receives, and what must cross
replicas does so through Redis:

- every SSE event, in the session's event stream (:mod:`._events`), so a
  client whose stream broke resumes it on any replica (:mod:`._resume`);
- the client's answers to server requests and cancellations of its own
  requests, and standalone notifications, by publish/subscribe
  (:mod:`._channels`);
- the end of a session (``DELETE``), so every replica forgets it.

Sessions expire in Redis after ``serve.shared.sessionIdleSeconds`` without a
request; a replica also drops its own copy after that long. The 2026-07-28
era keeps no sessions, so its requests are served as the SDK serves them.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from uuid import uuid4

import anyio
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.connection import Connection
from mcp.server.lowlevel.server import Server
from mcp.server.runner import serve_connection
from mcp.server.streamable_http import GET_STREAM_KEY, MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import RequestBodyLimitMiddleware, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.message import SessionMessage
from mcp_types import (
    InitializeRequestParams,
    JSONRPCRequest,
    jsonrpc_message_adapter,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ._bodies import buffered, error_response, json_of, oversized_batch, routed, status_of, tool_calls
from ._channels import InjectableReadStream, PublishingWriteStream, SharedDispatcher
from ._events import RedisEventStore
from ._records import SessionRecords, record_of
from ._resume import resume_request_stream
from ._state import SharedState, replica_of
from ._subscription import listen

__all__ = ["SharedSessionManager"]

logger = logging.getLogger("toolsift.serve")

# How long a resumed stream waits for news before checking the running replica's lease.
_POLL_MS = 500
# Milliseconds a client waits before resuming a broken stream (the SSE retry field).
_RETRY_MS = 250
# Sessions one replica serves at once (opened or taken up); past it, new ones get 503, as with the SDK.
MAX_SESSIONS = 10_000


@dataclass
class _Session:
    """One session as this replica serves it."""

    id: str
    transport: StreamableHTTPServerTransport
    store: RedisEventStore
    reader: InjectableReadStream | None = None
    writer: PublishingWriteStream | None = None
    connection: Connection | None = None
    listeners: int = 0  # open standalone GET streams on this replica
    touched: float = field(default_factory=time.monotonic)


class SharedSessionManager:
    """The ASGI endpoint of a replica: sessions shared with every replica through ``state``'s Redis.

    Use it as the SDK's manager is used: enter :meth:`run` in the app's
    lifespan and route the MCP path to the manager itself.

    Args:
        app: The SDK server.
        state: This replica's share of the gateway's state (running before :meth:`run`).
        repeatable: Whether a served tool may run again when the replica
            running a call of it stopped before answering (read-only or
            idempotent tools).
        json_response: Answer with JSON bodies instead of SSE streams (nothing to resume then).
        security_settings: The SDK's transport security settings.
        max_request_body_size: Largest request body (larger: 413).
    """

    def __init__(
        self,
        app: Server[Any],
        state: SharedState,
        *,
        repeatable: Callable[[str], Awaitable[bool]],
        json_response: bool = False,
        security_settings: TransportSecuritySettings | None = None,
        max_request_body_size: int = 4 * 1024 * 1024,
    ) -> None:
        self.app = app
        self.state = state
        self.repeatable = repeatable
        self.json_response = json_response
        self.security_settings = security_settings
        self._asgi = RequestBodyLimitMiddleware(self._handle, max_request_body_size)
        # The 2026-07-28 era has no sessions: the SDK serves those requests as they come.
        self._modern = StreamableHTTPSessionManager(
            app,
            json_response=json_response,
            stateless=True,
            security_settings=security_settings,
            max_request_body_size=max_request_body_size,
        )
        self._sessions: dict[str, _Session] = {}
        self._adopting = anyio.Lock()
        self._group: TaskGroup | None = None
        self._lifespan_state: Any = None
        redis = state.redis
        self._answers_channel = redis.key("answers")
        self._notes_channel = redis.key("notes")
        self._ended_channel = redis.key("ended")
        self.records = SessionRecords(state, lambda: [(held.id, held.connection) for held in self._sessions.values()])

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """Serve until the context exits; then every local copy of a session is closed."""
        async with (
            self._modern.run(),
            self.app.lifespan(self.app) as lifespan_state,
            anyio.create_task_group() as group,
        ):
            self._lifespan_state, self._group = lifespan_state, group
            await self.records.start()
            await group.start(self._subscribe)
            self.state.lease.lapsed.append(self.records.lost)
            try:
                yield
            finally:
                self.state.lease.lapsed.remove(self.records.lost)
                group.cancel_scope.cancel()
                self._group = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._asgi(scope, receive, send)

    # -- requests ----------------------------------------------------------------------------

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self._modern.handle_request(scope, receive, send)
            return
        session_id = headers.get(MCP_SESSION_ID_HEADER)
        if session_id not in self._sessions and len(self._sessions) >= MAX_SESSIONS:
            logger.warning("replica %s refuses a session: %d are open", self.state.replica, len(self._sessions))
            await error_response("Too many open sessions", 503)(scope, receive, send)
            return
        if session_id is None:
            await self._open(scope, receive, send)
            return
        session = await self._find(session_id)
        if session is None:
            await error_response("Session not found", 404)(scope, receive, send)
            return
        await self._touch(session)
        method = scope["method"]
        if method == "POST":
            body, receive = await buffered(receive)
            data = json_of(body)
            oversized = oversized_batch(data, self.state.settings.max_batch_messages)
            if oversized is not None:  # refused before any replica reads them
                await oversized(scope, receive, send)
                return
            answers = routed(data)
            if answers is not None:
                await self.state.redis.publish(
                    self._answers_channel, json.dumps({"session": session.id, "messages": answers})
                )
                await Response(status_code=202)(scope, receive, send)
                return
            calls = tool_calls(data)
            session.store.requests.update(calls)  # kept in the priming events: a lost call can run again
            try:
                await session.transport.handle_request(scope, receive, send)
            finally:
                for stream in calls:
                    session.store.requests.pop(stream, None)
            return
        elif method == "GET":
            await self._get(session, headers.get("last-event-id"), scope, receive, send)
            return
        await session.transport.handle_request(scope, receive, send)
        if method == "DELETE" and session.transport.is_terminated:
            await self._end(session.id)

    async def _get(
        self, session: _Session, last_event_id: str | None, scope: Scope, receive: Receive, send: Send
    ) -> None:
        if last_event_id:
            last = await session.store.event(last_event_id)
            if last is not None and last.stream != GET_STREAM_KEY:
                await resume_request_stream(
                    session.store,
                    self.state.lease,
                    last,
                    session.id,
                    scope,
                    receive,
                    send,
                    poll_ms=_POLL_MS,
                    rerun=partial(self._rerun, session),
                )
                return
        session.listeners += 1
        try:
            await session.transport.handle_request(scope, receive, send)
        finally:
            session.listeners -= 1

    async def _rerun(self, session: _Session, stream: str, lost: str, cursor: str) -> str | None:
        """Run a call that replica ``lost`` took down with it again, if its tool is safe to repeat.

        Returns the replica that runs it again (this one if its claim won), or
        None when it may not run again.
        """
        saved = await session.store.request_of(stream, cursor)
        request = jsonrpc_message_adapter.validate_json(saved, by_name=False) if saved else None
        if not isinstance(request, JSONRPCRequest) or not request.params:
            return None
        name = request.params.get("name")
        if not isinstance(name, str) or not await self.repeatable(name):
            return None
        won, runner = await self.state.redis.claim(
            self.state.redis.key("rerun", session.id, stream),
            self.state.instance,
            seconds=self.state.settings.session_idle_seconds,
        )
        if won and session.reader is not None:
            logger.warning(
                "replica %s runs call %s of %r again: replica %s stopped before it answered",
                self.state.replica,
                stream,
                name,
                replica_of(lost),
            )
            session.reader.inject(SessionMessage(request))
        return runner

    async def _touch(self, session: _Session) -> None:
        """Keep the session's keys alive in Redis (at most ten times per idle period)."""
        idle = self.state.settings.session_idle_seconds
        now = time.monotonic()
        if now - session.touched >= idle / 10:
            session.touched = now
            await self.state.redis.expire(self.state.session_keys(session.id), idle)

    # -- sessions ----------------------------------------------------------------------------

    def _local(self, session_id: str) -> _Session:
        state = self.state
        idle = state.settings.session_idle_seconds
        transport = StreamableHTTPServerTransport(
            mcp_session_id=session_id,
            is_json_response_enabled=self.json_response,
            event_store=(store := RedisEventStore(state.redis, session_id, replica=state.instance, ttl=idle)),
            security_settings=self.security_settings,
            retry_interval=_RETRY_MS,
            idle_timeout=idle,
        )
        return _Session(session_id, transport, store)

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A request with no session: an ``initialize`` opens one, recorded in Redis once it succeeded."""
        session = self._local(uuid4().hex)
        established = False
        try:
            assert self._group is not None
            await self._group.start(self._serve, session, None)
            status = await status_of(session.transport.handle_request, scope, receive, send)
            record = record_of(session.connection)
            if status is not None and status < 400 and record is not None:
                await self.records.save(session.id, record)
                established = True
        finally:
            if not established:
                await self._discard(session)

    async def _find(self, session_id: str) -> _Session | None:
        """This replica's copy of the session, adopted from Redis if need be; None: no such session."""
        session = self._sessions.get(session_id)
        if session is not None:
            return session
        record = await self.records.load(session_id)
        if record is None:
            return None
        async with self._adopting:
            session = self._sessions.get(session_id)
            if session is not None:
                return session
            session = self._local(session_id)
            assert self._group is not None
            await self._group.start(self._serve, session, record)
            logger.debug("replica %s adopted session %s", self.state.replica, session_id)
            return session

    async def _serve(
        self,
        session: _Session,
        record: dict[str, Any] | None,
        *,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Run the session's SDK connection until its transport ends (closed, deleted or idle)."""
        try:
            async with session.transport.connect() as (read, write):
                reader = InjectableReadStream(read)
                writer = PublishingWriteStream(write, partial(self._publish_note, session.id))
                dispatcher = SharedDispatcher(reader, writer, inline_methods=frozenset({"initialize"}))
                if record is None:
                    connection = Connection.for_loop(dispatcher, session_id=session.id)
                else:
                    connection = Connection(
                        dispatcher,
                        protocol_version=record["protocolVersion"],
                        session_id=session.id,
                        client_params=InitializeRequestParams.model_validate(record["client"]),
                    )
                    connection.initialized.set()
                session.reader, session.writer, session.connection = reader, writer, connection
                self._sessions[session.id] = session
                task_status.started()
                idle = session.transport.idle_scope or anyio.CancelScope()
                with idle:
                    async with anyio.create_task_group() as pump:
                        pump.start_soon(reader.pump)
                        await serve_connection(
                            self.app, dispatcher, connection=connection, lifespan_state=self._lifespan_state
                        )
                        pump.cancel_scope.cancel()
        except Exception:
            logger.exception("session %s crashed on replica %s", session.id, self.state.replica)
        finally:
            await self._discard(session)

    async def _discard(self, session: _Session) -> None:
        """Forget this replica's copy (only: the session goes on elsewhere) and close its transport."""
        if self._sessions.get(session.id) is session:
            del self._sessions[session.id]
        if not session.transport.is_terminated:
            with anyio.CancelScope(shield=True):
                await session.transport.terminate()

    async def _end(self, session_id: str) -> None:
        """The client ended the session: remove it from Redis and from every replica."""
        await self.state.redis.delete(*self.state.session_keys(session_id))
        await self.state.redis.publish(self._ended_channel, json.dumps({"session": session_id}))

    # -- messages between replicas -------------------------------------------------------------

    async def _publish_note(self, session_id: str, message: str) -> None:
        await self.state.redis.publish(self._notes_channel, json.dumps({"session": session_id, "message": message}))

    async def _subscribe(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Receive what other replicas publish for sessions, until cancelled."""
        channels = [self._answers_channel, self._notes_channel, self._ended_channel, self.records.channel]
        await listen(self.state, channels, self._deliver, task_status=task_status)

    async def _deliver(self, channel: str, data: dict[str, Any]) -> None:
        if channel == self.records.channel:
            await self.records.restore()
            return
        session = self._sessions.get(data["session"])
        if session is None:
            return
        if channel == self._answers_channel and session.reader is not None:
            for item in data["messages"]:
                session.reader.inject(SessionMessage(jsonrpc_message_adapter.validate_python(item, by_name=False)))
        elif channel == self._notes_channel and session.listeners and session.writer is not None:
            message = jsonrpc_message_adapter.validate_json(data["message"], by_name=False)
            await session.writer.inner.send(SessionMessage(message))
        elif channel == self._ended_channel and not session.transport.is_terminated:
            await self._discard(session)
