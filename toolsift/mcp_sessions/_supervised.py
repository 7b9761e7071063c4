"""``SupervisedClient``: one SDK client kept connected to one MCP server, for any number of callers.

One owner task (:meth:`SupervisedClient.run`) enters and exits every connection, as
anyio's cancel scopes require; any number of other tasks use the client it
keeps at the same time. The owner restarts a crashed server with backoff
(``Supervisor``); :meth:`SupervisedClient.client` is the SDK client a request goes
over now, and the error that says why there is none.

Lifecycle (``SessionState``; ``Lifecycle`` holds the table of transitions)::

    idle ──start──▶ connecting ──▶ ready ──crash──▶ restarting (backoff) ──▶ ready
                        │                               │ restart budget spent      ▲
                        │                               ▼                           │
                        │                             error ── window has room ─────┘
                        └──── could not start ──────▶ error (until replaced)
    any ──drain()──▶ draining ──▶ closing ──▶ closed          any ──close()──▶ closing ──▶ closed

What a request gets is decided by the state alone (``_ready_client``). ``McpSession``
builds on it what the server offers: its tools, their calls, its status.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Self

import anyio
import mcp.types as types
from anyio.abc import TaskGroup, TaskStatus
from mcp import Client

from .._exceptions import ServerUnavailable
from .._names import validate_server_name
from .._redaction import Redactor
from ..config import ServerConfig
from ._draining import DRAINED, Drain
from ._lifecycle import Lifecycle
from ._options import SessionOptions
from ._resource import TaskGroupResource
from ._sender import Era
from ._state import SessionState
from ._stderr import StderrBuffer
from ._supervisor import Supervisor
from ._tracker import CallCounts, CallTracker

__all__ = ["SupervisedClient"]

# After close() cancels running calls, time for their notifications/cancelled to reach the server.
_CANCEL_FLUSH_SECONDS = 1.0


class SupervisedClient:
    """One server's SDK client, kept connected by an owner task and shared by every caller.

    Args:
        config: The server's config (its ``name`` set).
        options: Application-level settings (restart policy, workspace root, sampling).
        life: The state machine the owner and the callers move and read.
        on_tools: Called in the owner task with each tool listing.
        on_withdraw: Called when the server's tools must leave the registry (down with no restart
            coming, draining, closed).

    Raises:
        InvalidToolName: ``config.name`` is not a valid server name.
    """

    def __init__(
        self,
        config: ServerConfig,
        options: SessionOptions | None,
        life: Lifecycle[Any],
        *,
        on_tools: Callable[[Sequence[types.Tool]], None],
        on_withdraw: Callable[[], None],
    ) -> None:
        validate_server_name(config.name)
        self.config = config
        self._options = options if options is not None else SessionOptions()
        self._redact = Redactor()
        self._stderr = StderrBuffer(config.name, self._options.stderr_lines, self._redact)
        self._calls = CallTracker()
        self._life = life
        self._withdraw = on_withdraw
        self._sup = Supervisor(
            config, self._options, self._stderr, self._redact, life, on_tools=on_tools, on_failed=on_withdraw
        )
        self._start, self._finished = anyio.Event(), anyio.Event()
        self._running = False
        self._close_reason: str | None = None
        self._drain: Drain | None = None  # set once it stops taking calls: what a new call is told
        self._drained_from = CallCounts()  # the calls that had ended when it did
        self._owner: _OwnTask | None = None

    # -- the owner, its start and its end --------------------------------------------------

    @property
    def name(self) -> str:
        """The server name."""
        return self.config.name

    @property
    def state(self) -> SessionState:
        """The current lifecycle state."""
        return self._life.state

    @property
    def reason(self) -> str | None:
        """Why the session is not ready (an error, a restart in progress), or None."""
        return self._life.reason

    async def __aenter__(self) -> Self:
        if self._owner is not None:
            raise RuntimeError(f"MCP session {self.name!r} is already entered")
        self._owner = _OwnTask(self)
        await self._owner.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> None:
        if self._owner is None:
            raise RuntimeError(f"MCP session {self.name!r} was not entered")
        await self._owner.__aexit__(exc_type, exc_val, exc_tb)

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Own the connection until :meth:`close`; a task group runs this.

        It connects at once unless the server is lazy, in which case it waits for
        :meth:`ensure_started`. Cancelling it closes the connection.

        Raises:
            RuntimeError: The session already ran or was closed (sessions are single-use).
        """
        if self._running or self._finished.is_set():
            raise RuntimeError(f"Cannot run MCP session {self.name!r} twice; create a new session")
        self._running = True
        task_status.started()
        try:
            if not self.config.lazy:
                self._start.set()
            await self._start.wait()
            if not self._life.leaving:
                await self._sup.run()
        finally:
            # A server that failed stays in error until it is closed; anything else that ends here is closed.
            if self._life.closing or self._life.state is not SessionState.ERROR:
                self._life.set(SessionState.CLOSED, self._close_reason)
            self._withdraw()
            self._life.settled.set()
            self._finished.set()

    async def wait_settled(self) -> None:
        """Wait until the first connection attempt is over: ready, error or closed."""
        await self._life.settled.wait()

    async def ensure_started(self) -> None:
        """Connect a lazy (or not yet connected) session and wait until it is ready.

        Raises:
            ServerUnavailable: It could not start, or it is closed.
            ServerDraining: It is draining.
            RuntimeError: No task runs the session (use ``async with`` or a group).
        """
        if not self._running:
            raise RuntimeError(
                f"MCP session {self.name!r} is not running; enter it with 'async with' or add it to an McpSessionGroup"
            )
        self._start.set()
        await self._life.settled.wait()
        self._ready_client()

    def stop_taking_calls(self, drain: Drain | None = None) -> Drain:
        """Begin to drain, in this very step: new calls raise ``ServerDraining``, the tools leave the registry.

        :meth:`drain` then lets the calls in flight finish and closes. A drain
        already begun stays as it is.

        Args:
            drain: How long the calls in flight may take and why (default: removed,
                ``SessionOptions.drain_seconds``).

        Returns:
            The drain in force.
        """
        if self._drain is None:
            self._drain = drain if drain is not None else Drain(self.name, self._options.drain_seconds, removed=True)
            self._drained_from = self._calls.ended
            self._life.set(SessionState.DRAINING, f"draining since {self._drain.since}")
            self._withdraw()
        return self._drain

    async def drain(self, deadline: float | None = None) -> CallCounts:
        """Stop taking calls, let running ones finish, then close.

        The tools leave the registry at once; new calls raise ``ServerDraining``.
        Calls still running after ``deadline`` seconds (default
        ``SessionOptions.drain_seconds``, or the deadline of a drain begun by
        :meth:`stop_taking_calls`) are cancelled: the server is told, and
        each returns an error result saying the server was removed. If the
        caller is cancelled, the session is left draining; ``close`` ends it.

        Returns:
            How the calls that were running ended: finished, or cancelled.

        Raises:
            ValueError: ``deadline`` is negative or not finite.
        """
        if self._life.state is SessionState.CLOSED:
            return CallCounts()
        drain = self.stop_taking_calls(None if deadline is None else Drain(self.name, deadline, removed=True))
        await self._calls.wait_idle(drain.seconds)
        await self._close(DRAINED)
        return self._calls.ended.since(self._drained_from)

    async def close(self) -> None:
        """Cancel running calls (each returns an error result), stop the server, wait for the owner.

        Idempotent. Must not be called from a subscriber callback (it waits for
        the owner task, which runs the callbacks).
        """
        await self._close(None)

    async def _close(self, reason: str | None) -> None:
        if not self._life.closing:
            self._close_reason = reason
            self._life.set(SessionState.CLOSING, reason)
            self._calls.cancel_all()
            await self._calls.wait_idle(_CANCEL_FLUSH_SECONDS)
            self._start.set()
            self._sup.stop()
        if self._running:
            await self._finished.wait()
        self._life.set(SessionState.CLOSED, self._close_reason)
        self._life.settled.set()
        self._finished.set()

    def _ready_client(self) -> Client:
        """The connection a call may use now, or the error that says why there is none: the state decides."""
        state = self._life.state
        client = self._sup.client
        if state is SessionState.READY and client is not None:
            return client
        if self._drain is not None and state in (SessionState.DRAINING, SessionState.CLOSING):
            raise self._drain.error()
        if self._life.closing:
            raise ServerUnavailable(self.name, SessionState.CLOSED.value, self._closed_text())
        if state in (SessionState.RESTARTING, SessionState.READY):
            # Ready without a connection: it ended a moment ago and the owner is about to restart it.
            raise ServerUnavailable(self.name, SessionState.RESTARTING.value, self._life.reason)
        # "is error" would not read; the state itself is in session.state.
        raise ServerUnavailable(self.name, "down" if state is SessionState.ERROR else state.value, self._life.reason)

    @contextmanager
    def tracked(self) -> Iterator[None]:
        """Count a request made on :meth:`client` as a call in flight: a drain waits for it, ``close`` cancels it.

        Raises:
            ServerUnavailable: On leaving, when ``close`` or the end of a drain cancelled the request.
        """
        with self._calls.track():
            yield
            return
        raise ServerUnavailable(self.name, SessionState.CLOSED.value, self._closed_text())

    async def client(self, era: Era | None = None) -> Client:
        """The SDK client a request goes over now, after starting a lazy session that has not started yet.

        A caller of the 2026-07-28 era (``modern``) stays on the session's connection; one that wants
        the handshake era (``handshake``) goes over the connection of that era kept beside it, and so
        does any request once the server asked mid-call (``Supervisor.client_for``).

        Raises:
            ServerDraining: The session is draining.
            ServerUnavailable: The session is not ready.
        """
        if self._life.state is SessionState.IDLE and self._running:
            await self.ensure_started()
        client = self._ready_client()
        if era == "modern":
            return client
        routed = await self._sup.client_for(client, handshake=era == "handshake")
        if routed is not client:
            self._ready_client()  # it may have stopped being ready while the other connection opened
        return routed

    def _closed_text(self) -> str:
        return self._close_reason or "the session was closed"


class _OwnTask(TaskGroupResource):
    """The task group of a session used on its own (``async with McpSession(...)``): it runs the owner task.

    Entering starts the owner and waits for the first connection attempt
    (not for a lazy server); a clean exit closes the session, which ends the
    owner; an exception cancels it instead.
    """

    def __init__(self, session: SupervisedClient) -> None:
        super().__init__()
        self._session = session

    async def _opened(self, tasks: TaskGroup) -> None:
        await tasks.start(self._session.run)
        if not self._session.config.lazy:
            await self._session.wait_settled()

    async def _closing(self) -> None:
        await self._session.close()
