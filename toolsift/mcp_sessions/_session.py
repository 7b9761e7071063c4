"""``McpSession``: one long-lived, supervised connection to one MCP server.

One owner task (:meth:`McpSession.run`) enters and exits every connection, as
anyio's cancel scopes require; any number of other tasks call through it at
the same time. The owner restarts a crashed server with backoff and keeps the
registry in step with the server's tool list.

Lifecycle (``SessionState``; ``Lifecycle`` holds the table of transitions)::

    idle ──start──▶ connecting ──▶ ready ──crash──▶ restarting (backoff) ──▶ ready
                        │                               │ restart budget spent      ▲
                        │                               ▼                           │
                        │                             error ── window has room ─────┘
                        └──── could not start ──────▶ error (until replaced)
    any ──drain()──▶ draining ──▶ closing ──▶ closed          any ──close()──▶ closing ──▶ closed

What a call gets is decided by the state alone (``_ready_client``).
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast, final

import anyio
import mcp.types as types
from anyio.abc import TaskGroup, TaskStatus
from mcp import Client, MCPError
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict

from .._exceptions import ServerUnavailable, ToolHeld
from .._names import validate_server_name
from .._redaction import Redactor
from ..config import ServerConfig
from ..registry import ToolResult
from ..registry._internal import ProgressCallback, repeatable_by
from ._as_client import send_as_client
from ._catalog import ServerCatalog
from ._connection import ConnectionEvents
from ._draining import DRAINED, Drain
from ._failures import (
    asked_mid_call_result,
    cancelled_result,
    crash_result,
    invalid_result,
    not_sent_result,
    rpc_error_result,
    timeout_result,
    too_large_result,
)
from ._lifecycle import Lifecycle
from ._masking import mask_result, mask_wire
from ._options import SessionOptions
from ._pins import ToolChange
from ._progress import AwaitedProgress
from ._publisher import ToolPublisher
from ._resource import TaskGroupResource
from ._sender import Era, Sender
from ._state import SessionEvent, SessionState, SessionStatus
from ._stderr import StderrBuffer
from ._substitutes import not_sent_reason, too_large_sizes
from ._supervisor import Supervisor
from ._tasks import call_as_task, runs_as_task
from ._tracker import CallCounts, CallTracker
from ._wrapper import McpToolWrapper, build_wrappers

if TYPE_CHECKING:
    from ..registry import ToolRegistry

__all__ = ["McpSession"]

logger = logging.getLogger("toolsift.mcp_sessions")


class _RawResult(BaseModel):
    """An extension's result, kept whole: the SDK knows no model for it."""

    model_config = ConfigDict(extra="allow")


_CONFIG_TIMEOUT: Any = object()
# After close() cancels running calls, time for their notifications/cancelled to reach the server.
_CANCEL_FLUSH_SECONDS = 1.0
_LAZY_REASON = "lazy: starts on first need (a skill naming it, a call of one of its tools)"
# States in which the session's tools stay registered (a restart keeps them).
_HOLDS_TOOLS = (SessionState.READY, SessionState.CONNECTING, SessionState.RESTARTING)


@final
class McpSession:
    """A supervised connection to one MCP server, shared by every task that calls it.

    Use it as ``async with McpSession(config) as session:`` or let an
    ``McpSessionGroup`` run it. With a ``registry``, the session registers the
    server's tools as ``namespace__tool`` (internal or global per
    ``internalOnly``) once ready, swaps them atomically when the server
    announces a change, and removes them when it is down with no restart coming, drains or
    closes. A crash keeps them registered while the server restarts.

    Any transport is reconnected after a loss (a crashed stdio child, a
    dropped HTTP connection) with the backoff of ``SessionOptions.restart``, up
    to ``maxRestarts`` times within its window; past that the session waits in
    ``error`` (tools withdrawn) until the window has room, then starts the
    server again. A server that cannot start at all is not retried. Answers
    over ``maxResultBytes`` end their call with an error as they arrive, and
    secrets the session resolved are masked in every answer.

    Args:
        config: The server's config (its ``name`` set).
        registry: Where the tools are registered; None keeps them on the session only.
        options: Application-level settings (restart policy, workspace root, sampling).

    Raises:
        InvalidToolName: ``config.name`` is not a valid server name.
    """

    def __init__(
        self, config: ServerConfig, *, registry: ToolRegistry | None = None, options: SessionOptions | None = None
    ) -> None:
        validate_server_name(config.name)
        self.config = config
        self._publisher = ToolPublisher(config, registry) if registry is not None else None
        self._options = options if options is not None else SessionOptions()
        self._redact = Redactor()
        self._stderr = StderrBuffer(config.name, self._options.stderr_lines, self._redact)
        self._calls = CallTracker()
        self._life = Lifecycle(self, lambda: tuple(w.spec.name for w in self._wrappers))
        self._warning: str | None = None
        self._wrappers: tuple[McpToolWrapper, ...] = ()
        self._listed: tuple[types.Tool, ...] | None = None  # what the wrappers were built from, while registered
        self._held: dict[str, str] = {}  # tool (the server's name) -> why it is held back (see ``_pins``)
        self._changes: tuple[ToolChange, ...] = ()  # changed since pinned: held back, or kept with a warning
        self._sup = Supervisor(
            config,
            self._options,
            self._stderr,
            self._redact,
            self._life,
            on_tools=self._apply_tools,
            on_failed=self._withdraw,
        )
        self._start, self._finished = anyio.Event(), anyio.Event()
        self._running = False
        self._close_reason: str | None = None
        self._drain: Drain | None = None  # set once it stops taking calls: what a new call is told
        self._drained_from = CallCounts()  # the calls that had ended when it did
        self._owner: _OwnTask | None = None

    # -- what it is -----------------------------------------------------------------

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

    @property
    def catalog(self) -> ServerCatalog:
        """Tools, resources, templates and prompts as last listed (unfiltered)."""
        return self._sup.catalog

    @property
    def instructions(self) -> str | None:
        """What the server said about using it (its handshake's ``instructions``), once it connected."""
        return self._sup.instructions

    @property
    def description(self) -> str | None:
        """What the server says it is (its ``serverInfo`` title and description), while connected."""
        client = self._sup.client
        info = client.server_info if client is not None else None
        text = " ".join(part for part in (info.title, info.description) if part) if info is not None else ""
        return text or None

    @property
    def tools(self) -> tuple[McpToolWrapper, ...]:
        """The server's tools as registry tools, after include/exclude and name checks."""
        return self._wrappers

    @property
    def held(self) -> Mapping[str, str]:
        """Tools held back (by the server's own names), each with why and how to accept it."""
        return dict(self._held)

    @property
    def tool_changes(self) -> tuple[ToolChange, ...]:
        """The server's tools whose definition changed since it was pinned: held back, or kept by ``pinTools: warn``."""
        return self._changes

    def held_back(self) -> dict[str, tuple[str, str]]:
        """The held tools as the registry explains them: canonical name -> (server, why)."""
        namespace = self.config.namespace
        return {f"{namespace}__{tool}": (self.name, why) for tool, why in self._held.items()}

    def accept_tool_changes(self, tools: Iterable[str] | None = None) -> tuple[str, ...]:
        """Pin the changed definitions of this server's tools (all, or ``tools``) and make them usable now.

        Returns:
            The tools whose new definition was pinned.

        Raises:
            ConfigError: The pin file cannot be read.
            OSError: It cannot be written.
        """
        pins = self._options.pins
        accepted = pins.accept(self.name, tools) if pins is not None else ()
        if accepted and self._sup.catalog.tools:
            self._listed = None  # the same listing, reviewed again against the new pins
            self._apply_tools(self._sup.catalog.tools)
        return accepted

    @property
    def in_flight(self) -> int:
        """Calls currently running through this session."""
        return self._calls.running

    @property
    def restarts(self) -> int:
        """Restarts after a crash or a lost connection, so far."""
        return self._sup.restarts

    @property
    def protocol_version(self) -> str | None:
        """The protocol version negotiated on the last connection."""
        return self._sup.protocol

    @property
    def extensions(self) -> dict[str, dict[str, Any]]:
        """The extensions the server advertised on the current connection (identifier -> settings); empty when down."""
        client = self._sup.client
        if client is None or self._life.state is not SessionState.READY:
            return {}
        return dict(client.server_capabilities.extensions or {})

    def stderr_tail(self, lines: int = 20) -> list[str]:
        """The last lines the server wrote on stderr (stdio only), secrets masked."""
        return self._stderr.tail(lines)

    def mask_secrets(self, text: str) -> str:
        """``text`` with the secrets this session resolved (env, headers, references) masked."""
        return self._redact(text)

    def status(self) -> SessionStatus:
        """This session as one row of the status table."""
        state = self._life.state
        return SessionStatus(
            server=self.name,
            transport=self.config.transport_kind,
            visibility="internal" if self.config.internal_only else "global",
            state=state,
            tools=len(self._wrappers) if state in _HOLDS_TOOLS else 0,
            error=_LAZY_REASON
            if state is SessionState.IDLE and self.config.lazy
            else self._life.reason
            if state is not SessionState.READY
            else self._warning or self._held_note(),
            restarts=self._sup.restarts,
            protocol=self._sup.protocol,
            held=tuple(self._held),
        )

    def _held_note(self) -> str | None:
        if self._held and not self._changes:  # the pins could not be read: everything is held
            return f"its tools are held back: {next(iter(self._held.values()))}"
        if not self._changes:
            return None
        names = ", ".join(change.tool for change in self._changes)
        if not self._held:
            return f"tools changed since pinned, kept usable (pinTools: warn): {names}"
        return (
            f"tools held back, changed since pinned: {names}; see the change with 'toolsift check', "
            f"accept it with 'toolsift trust --tools {self.name}'"
        )

    def __repr__(self) -> str:
        return f"McpSession({self.name!r}, state={self._life.state.value!r}, tools={len(self._wrappers)})"

    def subscribe(self, callback: Callable[[SessionEvent], None]) -> Callable[[], None]:
        """Call ``callback`` on every state change and tool-list change; returns the unsubscriber.

        Callbacks run in the session's owner task (or in the task that called
        ``drain``/``close``) and must not block; an exception they raise is logged.
        """
        return self._life.subscribe(callback)

    # -- lifecycle --------------------------------------------------------------------

    async def __aenter__(self) -> McpSession:
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

    # -- the owner's hooks -----------------------------------------------------------------

    def _apply_tools(self, tools: Sequence[types.Tool]) -> None:
        listed = tuple(tools)
        if listed == self._listed and not self._held:
            # Unchanged (a reconnect, a list_changed that changed nothing): swapping equal tools in would
            # only cost the registry its schema caches. With tools held back it is reviewed again, as
            # 'toolsift trust --tools' may have accepted them meanwhile.
            return
        held_before = self._held
        kept = self._review(listed)
        if listed == self._listed and self._held == held_before:
            return  # still held as it was
        previous, self._wrappers = self._wrappers, tuple(build_wrappers(self, kept))
        self._listed = listed
        if self._publisher is not None and self._life.state is SessionState.READY:
            self._warning = self._publisher.publish(self._wrappers, previous=previous, held=self.held_back())
        self._life.emit("tools")

    def _review(self, listed: tuple[types.Tool, ...]) -> tuple[types.Tool, ...]:
        """The listed tools that match their pins (or are new); the changed ones are held back or warned of."""
        pins = self._options.pins
        if pins is None:
            return listed
        review = pins.review(self.config, listed)
        if review.problem is not None:
            self._held = {tool.name: review.problem for tool in listed}
        else:
            self._held = {change.tool: change.refusal() for change in review.held}
        self._changes = review.held + review.warned
        return review.kept

    def _withdraw(self) -> None:
        self._listed = None  # so that the same list, listed again, is registered again
        if self._publisher is not None:
            self._publisher.withdraw(self._wrappers)

    # -- calls ------------------------------------------------------------------------------

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = _CONFIG_TIMEOUT,
        progress: ProgressCallback | None = None,
        era: Era | None = None,
        sender: Sender | None = None,
    ) -> ToolResult:
        """Call a tool by the server's own name.

        Every content block and the structured content are kept, with the
        secrets this session resolved masked. A tool that fails (``isError``, a
        JSON-RPC error, a timeout, an answer over ``maxResultBytes``, a crash of
        the server, the session closing under it) returns ``is_error=True`` with
        a text that names the server and the tool; text is not fenced here (the
        registry wrapper does that for untrusted servers). If the caller is cancelled, the
        server is sent ``notifications/cancelled`` and the cancellation propagates.
        A lazy session that has not started yet is started first.

        Args:
            name: The tool's name on the server.
            arguments: Its arguments.
            timeout: Seconds to wait for the answer; defaults to ``toolTimeout``; None waits forever.
            progress: Receives the server's progress notifications.
            era: The connection the caller's era needs (see :class:`Era`); None lets the session choose.
                Then a call the server refuses over 2026-07-28 because it asked mid-call (a tool
                written against the classic API) is made once more in the handshake era when the tool
                is read-only or idempotent by its annotations; any other ends in an error saying why,
                since it may have acted before it asked (later calls go to that connection at once).
            sender: The caller's own way of sending the call over the connection chosen (a gateway
                sends it as its client); what it returns is what the call returns, masked.

        Raises:
            ToolHeld: The tool changed since it was pinned and is held back.
            ServerDraining: The session is draining.
            ServerUnavailable: The session is connecting, restarting, failed or closed.
        """
        if name in self._held:
            # What the registry does not list, a direct call must not reach either.
            raise ToolHeld(f"{self.config.namespace}__{name}", self.name, self._held[name])
        client, events = await self.client(era), self._sup.events
        seconds = self.config.tool_timeout if timeout is _CONFIG_TIMEOUT else timeout
        # The result waits for the progress reported before it, so that none arrives after it.
        awaited = AwaitedProgress(progress) if progress is not None else None
        with self._calls.track():
            try:
                if sender is not None and sender.sends_over(client):
                    raw = await sender(client, name, arguments, seconds=seconds, progress=awaited)
                elif runs_as_task(self.catalog.task_support.get(name), self.config.tasks):
                    raw = await self._call_as_task(client, name, arguments, seconds, awaited)
                else:
                    # The SDK calls progress callbacks positionally, as ProgressCallback promises.
                    raw = await client.call_tool(
                        name,
                        arguments,
                        progress_callback=cast("ProgressFnT", awaited),
                        read_timeout_seconds=seconds if seconds is not None else math.inf,
                    )
                if awaited is not None and not await awaited.settled():
                    logger.warning(
                        "MCP server %r: tool %r answered while its progress callback was still busy; the result "
                        "goes on without waiting longer",
                        self.name,
                        name,
                    )
                return mask_result(raw if isinstance(raw, ToolResult) else ToolResult.from_mcp(raw), self._redact)
            except MCPError as exc:
                if era != "modern" and await self._sup.ask_again(client, exc):
                    if self._repeatable(name):
                        return await self.call_tool(
                            name, arguments, timeout=timeout, progress=progress, era=era, sender=sender
                        )
                    return asked_mid_call_result(self.name, name)
                return self._call_error(name, exc, seconds, events)
            except Exception as exc:
                return invalid_result(self.name, name, exc, self._redact)
        # Reached only when close() or the end of a drain cancelled this call.
        return cancelled_result(self.name, name, self._closed_text())

    def _repeatable(self, name: str) -> bool:
        """Whether tool ``name`` may run again without more effect: read-only or idempotent by its annotations."""
        tool = next((tool for tool in self.catalog.tools if tool.name == name), None)
        return tool is not None and repeatable_by(tool.annotations)

    async def _call_as_task(
        self,
        client: Client,
        name: str,
        arguments: dict[str, Any] | None,
        seconds: float | None,
        progress: ProgressCallback | None,
    ) -> types.CallToolResult:
        # Only handshake-era listings carry execution.taskSupport (2026-07-28 moved tasks to an extension).
        with anyio.fail_after(seconds if seconds is not None else math.inf) as deadline:
            try:
                return await call_as_task(client, name, arguments, ttl=seconds, progress=progress)
            except anyio.get_cancelled_exc_class():
                if deadline.cancel_called:
                    raise MCPError(types.REQUEST_TIMEOUT, "the task did not finish in time") from None
                raise

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

    def _call_error(self, tool: str, exc: MCPError, seconds: float | None, events: ConnectionEvents) -> ToolResult:
        if exc.code == types.REQUEST_TIMEOUT:
            return timeout_result(self.name, tool, seconds)
        if (sizes := too_large_sizes(exc)) is not None:
            return too_large_result(self.name, tool, *sizes)
        if (reason := not_sent_reason(exc)) is not None:
            return not_sent_result(self.name, tool, reason)
        if exc.code != types.CONNECTION_CLOSED:
            return rpc_error_result(self.name, tool, exc, self._redact)
        if self._life.closing:
            return cancelled_result(self.name, tool, self._closed_text())
        # The call's own connection: a straggler from a connection already replaced must not end the new one.
        events.connection_lost(f"the connection closed during tool {tool!r}")
        return crash_result(
            self.name, tool, stdio=self.config.transport_kind == "stdio", plan=self._sup.plan_after_loss()
        )

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        """Read one resource (a lazy session is started first).

        Raises:
            ServerDraining: The session is draining.
            ServerUnavailable: The session is not ready.
            MCPError: The server refused (unknown resource, failure).
        """
        return await (await self.client()).read_resource(uri)

    async def extension_request(self, extension: str, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Send a request of an extension the server declared (the SDK has no method for it); the raw result.

        Args:
            extension: The extension's identifier (``io.modelcontextprotocol/skills``).
            method: The request's method (``skills/list``).
            params: Its params.

        Raises:
            ServerDraining: The session is draining.
            ServerUnavailable: The session is not ready.
            LookupError: On a 2026-07-28 connection, the server does not declare ``extension`` (it must
                not be asked). A 2025-11-25 handshake carries no extensions, so there it is asked, and a
                server without the extension answers ``-32601`` (method not found).
            MCPError: The server refused.
        """
        client = await self.client()
        modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
        if modern and extension not in (client.server_capabilities.extensions or {}):
            raise LookupError(f"MCP server {self.name!r} does not declare the extension {extension!r}")
        request = types.Request[dict[str, Any], str](method=method, params=dict(params))
        result = await client.session.send_request(request, _RawResult)
        return dict(result.model_extra or {})

    def declares(self, extension: str) -> bool | None:
        """Whether the connected server declares ``extension``: False when not connected, None when it cannot say.

        Extensions are a 2026-07-28 capability: a 2025-11-25 handshake leaves them out, so on such a
        connection only asking the extension's method tells (see :meth:`extension_request`).
        """
        client = self._sup.client
        if client is None:
            return False
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return None
        return extension in (client.server_capabilities.extensions or {})

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> types.GetPromptResult:
        """Render one prompt (a lazy session is started first).

        Raises:
            ServerDraining: The session is draining.
            ServerUnavailable: The session is not ready.
            MCPError: The server refused (unknown prompt, bad arguments).
        """
        return await (await self.client()).get_prompt(name, arguments)

    async def complete(
        self,
        ref: types.PromptReference | types.ResourceTemplateReference,
        argument: dict[str, str],
        context_arguments: dict[str, str] | None = None,
    ) -> types.CompleteResult:
        """Ask the server to complete an argument of one of its prompts or resource templates.

        Raises:
            ServerDraining: The session is draining.
            ServerUnavailable: The session is not ready.
            MCPError: The server refused (no completions, unknown reference).
        """
        return await (await self.client()).complete(ref, argument, context_arguments)

    async def subscribe_resource(self, uri: str) -> None:
        """Ask the server for ``notifications/resources/updated`` of ``uri`` (to ``ClientCallbacks``).

        Raises:
            ServerDraining: The session is draining.
            ServerUnavailable: The session is not ready.
            MCPError: The server refused, or the connection speaks 2026-07-28, where
                ``resources/subscribe`` is gone (connect with ``protocol: legacy``).
        """
        client = await self.client("handshake")
        with _legacy_method(client, "resources/subscribe"):
            await client.subscribe_resource(uri)

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop the updates of ``uri``.

        Raises:
            ServerDraining: The session is draining.
            ServerUnavailable: The session is not ready.
            MCPError: The server refused, or the connection speaks 2026-07-28.
        """
        client = await self.client("handshake")
        with _legacy_method(client, "resources/unsubscribe"):
            await client.unsubscribe_resource(uri)

    async def set_logging_level(self, level: types.LoggingLevel) -> None:
        """Ask the server to send log messages at ``level`` and above.

        On a 2026-07-28 connection there is no such request (log messages are
        asked for per request, ``ClientCallbacks.log_level``); nothing is sent.

        Raises:
            ServerDraining: The session is draining.
            ServerUnavailable: The session is not ready.
            MCPError: The server refused.
        """
        client = await self.client("handshake")
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        with _legacy_method(client, "logging/setLevel"):
            await client.set_logging_level(level)

    async def send_as_client(
        self, method: str, params: dict[str, Any], capabilities: dict[str, Any] | None, *, name: str | None = None
    ) -> dict[str, Any]:
        """Send a request of an extension's method for a gateway's client, and return the result as it came.

        The secrets this session resolved are masked in it, as in a tool's result.

        Args:
            method: The method (``tasks/get``, ...), sent as it is.
            params: Its params, sent as they are.
            capabilities: What the client declared (wire form), sent instead of this session's own;
                None for a handshake-era client's request, which goes over the handshake-era connection
                where the session keeps one (where that client's calls made their tasks).
            name: The ``Mcp-Name`` header the method needs, if any.

        Raises:
            ServerDraining: The session is draining.
            ServerUnavailable: The session is not ready.
            MCPError: The server refused.
        """
        client = await self.client("handshake" if capabilities is None else None)
        with self._calls.track():
            return mask_wire(await send_as_client(client, method, params, capabilities, name=name), self._redact)
        # Reached only when close() or the end of a drain cancelled the request.
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

    # -- helpers -------------------------------------------------------------------------------

    def _closed_text(self) -> str:
        return self._close_reason or "the session was closed"


@contextmanager
def _legacy_method(client: Client, method: str) -> Iterator[None]:
    """Call a method the SDK deprecates for 2026-07-28, and say so when the connection speaks it."""
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        raise MCPError(
            types.METHOD_NOT_FOUND,
            f"{method} does not exist in protocol {client.protocol_version}; "
            "connect to this server with 'protocol: legacy' to use it",
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        yield


class _OwnTask(TaskGroupResource):
    """The task group of a session used on its own (``async with McpSession(...)``): it runs the owner task.

    Entering starts the owner and waits for the first connection attempt
    (not for a lazy server); a clean exit closes the session, which ends the
    owner; an exception cancels it instead.
    """

    def __init__(self, session: McpSession) -> None:
        super().__init__()
        self._session = session

    async def _opened(self, tasks: TaskGroup) -> None:
        await tasks.start(self._session.run)
        if not self._session.config.lazy:
            await self._session.wait_settled()

    async def _closing(self) -> None:
        await self._session.close()
