"""``McpSession``: one long-lived, supervised connection to one MCP server, and what the server offers.

The connection itself (the owner task, restarts, drain and close, the SDK
client a request goes over) is ``SupervisedClient``'s; a session adds the
server's tools (``SessionTools``: listed, held against the pins, registered),
their calls, and its status.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, cast, final

import mcp.types as types
from mcp import MCPError
from mcp.shared.dispatcher import ProgressFnT
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from ..config import ServerConfig
from ..registry import ToolResult
from ..registry._internal import ProgressCallback, repeatable_by
from ._as_client import extension_request
from ._catalog import ServerCatalog
from ._connection_events import ConnectionEvents
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
from ._lifecycle import EventKind, Lifecycle
from ._masking import mask_result
from ._options import SessionOptions
from ._pins import ToolChange
from ._progress import AwaitedProgress
from ._publisher import ToolPublisher
from ._sender import Era, Sender
from ._session_tools import SessionTools
from ._state import SessionState, SessionStatus
from ._substitutes import not_sent_reason, too_large_sizes
from ._supervised import SupervisedClient
from ._tasks import call_as_task, runs_as_task
from ._wrapper import McpToolWrapper, build_wrappers

if TYPE_CHECKING:
    from ..registry import ToolRegistry

__all__ = ["McpSession", "SessionEvent"]

logger = logging.getLogger("toolsift.mcp_sessions")


_CONFIG_TIMEOUT: Any = object()
_LAZY_REASON = "lazy: starts on first need (a skill naming it, a call of one of its tools)"
# States in which the session's tools stay registered (a restart keeps them).
_HOLDS_TOOLS = (SessionState.READY, SessionState.CONNECTING, SessionState.RESTARTING)


@dataclass(frozen=True)
class SessionEvent:
    """What a session tells its subscribers.

    Attributes:
        session: The session the event is about.
        kind: ``state`` (the state changed), ``tools`` (the tool list changed and,
            when the session has a registry, was swapped in), or ``prompts`` /
            ``resources`` (the server announced that list changed and it was listed again).
        state: The state after the event.
        reason: Why the session is not ready, when it is not.
        tools: Canonical names of the session's tools after the event.
    """

    session: McpSession
    kind: EventKind
    state: SessionState
    reason: str | None = None
    tools: tuple[str, ...] = ()


@final
class McpSession(SupervisedClient):
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
        options = options if options is not None else SessionOptions()
        publisher = ToolPublisher(config, registry) if registry is not None else None
        self._tools = SessionTools(config, publisher, options.pins, partial(build_wrappers, self))
        life: Lifecycle[SessionEvent] = Lifecycle(config.name, self._event)
        super().__init__(config, options, life, on_tools=self._apply_tools, on_withdraw=self._tools.withdraw)

    # -- what it is -----------------------------------------------------------------

    @property
    def catalog(self) -> ServerCatalog:
        """Tools, resources, templates and prompts as last listed (unfiltered)."""
        return self._sup.catalog

    @property
    def instructions(self) -> str | None:
        """What the server said about using it (its handshake's ``instructions``), once it connected; None
        while they are held back (see :attr:`instructions_held`)."""
        return self._sup.instructions if self._tools.instructions_held is None else None

    @property
    def instructions_held(self) -> str | None:
        """Why the server's instructions are held back (changed since pinned, ``pinTools: hold``), or None."""
        return self._tools.instructions_held

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
        return self._tools.wrappers

    @property
    def held(self) -> Mapping[str, str]:
        """Tools held back (by the server's own names), each with why and how to accept it."""
        return dict(self._tools.held)

    @property
    def tool_changes(self) -> tuple[ToolChange, ...]:
        """The server's tools whose definition changed since it was pinned: held back, or kept by ``pinTools: warn``."""
        return self._tools.changes

    def held_back(self) -> dict[str, tuple[str, str]]:
        """The held tools as the registry explains them: canonical name -> (server, why)."""
        return self._tools.held_back()

    def accept_tool_changes(self, tools: Iterable[str] | None = None) -> tuple[str, ...]:
        """Pin the changed (or added) definitions of this server's tools (all, or ``tools``) and make them
        usable now; without ``tools``, its changed instructions too.

        Returns:
            The tools whose new definition was pinned.

        Raises:
            ConfigError: The pin file cannot be read.
            OSError: It cannot be written.
        """
        listed = self._sup.catalog.tools
        accepted = self._tools.accept(tools, listed, self._sup.instructions)
        if accepted and listed:
            self._apply_tools(listed)
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
            tools=len(self._tools.wrappers) if state in _HOLDS_TOOLS else 0,
            error=_LAZY_REASON
            if state is SessionState.IDLE and self.config.lazy
            else self._life.reason
            if state is not SessionState.READY
            else self._tools.note(),
            restarts=self._sup.restarts,
            protocol=self._sup.protocol,
            held=tuple(self._tools.held),
        )

    def __repr__(self) -> str:
        return f"McpSession({self.name!r}, state={self._life.state.value!r}, tools={len(self._tools.wrappers)})"

    def subscribe(self, callback: Callable[[SessionEvent], None]) -> Callable[[], None]:
        """Call ``callback`` on every state change and tool-list change; returns the unsubscriber.

        Callbacks run in the session's owner task (or in the task that called
        ``drain``/``close``) and must not block; an exception they raise is logged.
        """
        return self._life.subscribe(callback)

    def _event(self, kind: EventKind) -> SessionEvent:
        life = self._life
        return SessionEvent(self, kind, life.state, life.reason, self._tools.names)

    # -- lifecycle --------------------------------------------------------------------

    # -- the owner's hooks -----------------------------------------------------------------

    def _apply_tools(self, tools: Sequence[types.Tool]) -> None:
        self._tools.review_instructions(self._sup.instructions)  # a listing follows every handshake
        if self._tools.apply(tools, publish=self._life.state is SessionState.READY):
            self._life.emit("tools")

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
        """Call a tool by the server's own name (a lazy session is started first).

        Content and structured content are kept, the session's secrets masked, text not fenced (the
        registry's wrapper does that). A tool that fails (``isError``, a JSON-RPC error, a timeout, an
        answer over ``maxResultBytes``, a crash, the session closing) returns ``is_error=True`` with a
        text naming the server and the tool. A cancelled caller's call is cancelled on the server too.

        Args:
            name: The tool's name on the server.
            arguments: Its arguments.
            timeout: Seconds to wait for the answer; defaults to ``toolTimeout``; None waits forever.
            progress: Receives the server's progress notifications.
            era: The connection the caller's era needs (see :class:`Era`); None lets the session choose.
            sender: The caller's own way of sending the call (a gateway's, as its client); what it
                returns is what the call returns, masked.

        Raises:
            ToolHeld: The tool changed since it was pinned and is held back.
            ServerDraining: The session is draining.
            ServerUnavailable: The session is connecting, restarting, failed or closed.
        """
        self._tools.refuse_held(name)  # what the registry does not list, a direct call must not reach either
        client, events = await self.client(era), self._sup.events
        seconds = self.config.tool_timeout if timeout is _CONFIG_TIMEOUT else timeout
        # The result waits for the progress reported before it, so that none arrives after it.
        awaited = AwaitedProgress(progress) if progress is not None else None
        with self._calls.track():
            try:
                if sender is not None and sender.sends_over(client):
                    raw = await sender(client, name, arguments, seconds=seconds, progress=awaited)
                elif runs_as_task(self.catalog.task_support.get(name), self.config.tasks):
                    raw = await call_as_task(client, name, arguments, seconds=seconds, progress=awaited)
                else:
                    # The SDK calls progress callbacks positionally, as ProgressCallback promises.
                    on_progress, limit = cast("ProgressFnT", awaited), seconds if seconds is not None else math.inf
                    raw = await client.call_tool(
                        name, arguments, progress_callback=on_progress, read_timeout_seconds=limit
                    )
                if awaited is not None:
                    await awaited.settle(self.name, name)
                return mask_result(raw if isinstance(raw, ToolResult) else ToolResult.from_mcp(raw), self._redact)
            except MCPError as exc:
                if era != "modern" and await self._sup.ask_again(client, exc):
                    return await self._once_more(name, arguments, timeout, progress, era, sender)
                return self._call_error(name, exc, seconds, events)
            except Exception as exc:
                return invalid_result(self.name, name, exc, self._redact)
        # Reached only when close() or the end of a drain cancelled this call.
        return cancelled_result(self.name, name, self._closed_text())

    async def _once_more(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        timeout: float | None,
        progress: ProgressCallback | None,
        era: Era | None,
        sender: Sender | None,
    ) -> ToolResult:
        """A call the server refused over 2026-07-28 for asking mid-call, made again in the handshake era.

        Only a tool that repeats nothing by running again (read-only or idempotent) is: another may
        have acted before it asked, so its call ends in an error saying why.
        """
        if not self._repeatable(name):
            return asked_mid_call_result(self.name, name)
        return await self.call_tool(name, arguments, timeout=timeout, progress=progress, era=era, sender=sender)

    def _repeatable(self, name: str) -> bool:
        """Whether tool ``name`` may run again without more effect: read-only or idempotent by its annotations."""
        tool = next((tool for tool in self.catalog.tools if tool.name == name), None)
        return tool is not None and repeatable_by(tool.annotations)

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
        """Send a request of an extension the server declared (see :func:`extension_request`); the raw result.

        Raises:
            ServerDraining: The session is draining.
            ServerUnavailable: The session is not ready.
            LookupError: On a 2026-07-28 connection, the server does not declare ``extension``.
            MCPError: The server refused.
        """
        return await extension_request(await self.client(), self.name, extension, method, params)

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

    # -- helpers -------------------------------------------------------------------------------
