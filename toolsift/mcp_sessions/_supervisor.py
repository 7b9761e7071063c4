"""Keeping one server connected: connect, notice a loss, restart with backoff, or give up.

This is the body of a session's owner task. It enters and exits every
connection itself (anyio cancel scopes must be exited by the task that entered
them) and decides, after each loss, whether to try again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import anyio
import anyio.to_thread
import mcp.types as types
from mcp import Client, MCPError

from .._exceptions import ConfigError
from .._redaction import Redactor
from ..config import ServerConfig
from ._budget import RestartBudget
from ._catalog import ServerCatalog, list_prompts, list_resources, list_tools
from ._connection import run_connection
from ._connection_events import ConnectionEvents, ListKind
from ._endpoint import Endpoint, resolve_endpoint
from ._failures import describe_exception
from ._handshake import HandshakeSibling
from ._lifecycle import Lifecycle
from ._options import SessionOptions
from ._state import SessionState
from ._stderr import StderrBuffer

__all__ = ["Supervisor"]

logger = logging.getLogger("toolsift.mcp_sessions")
# How the SDK's server refuses a request of its own that a 2026-07-28 connection cannot carry (NoBackChannelError).
_NO_BACK_CHANNEL = "no back-channel for server-initiated requests"


class Supervisor:
    """The connection half of a session; the session reads its ``client`` and counters.

    Args:
        config: The server.
        options: Restart policy, workspace, sampling.
        stderr: Where a stdio child's stderr goes.
        redact: Masks resolved secrets (updated at every connect).
        life: The session's state machine.
        on_tools: Called with the server's tools when they were (re)listed.
        on_failed: Called when the server is down and not restarted, or waits out its restart budget (tools withdrawn).
    """

    def __init__(
        self,
        config: ServerConfig,
        options: SessionOptions,
        stderr: StderrBuffer,
        redact: Redactor,
        life: Lifecycle[Any],
        *,
        on_tools: Callable[[Sequence[types.Tool]], None],
        on_failed: Callable[[], None],
    ) -> None:
        self._config = config
        self._options = options
        self._stderr = stderr
        self._redact = redact
        self._life = life
        self._on_tools = on_tools
        self._on_failed = on_failed
        self._stop = anyio.Event()
        self._connection_scope: anyio.CancelScope | None = None
        self.client: Client | None = None
        # Beside a 2026-07-28 connection, the handshake-era one for calls that ask mid-call (see connect_mode).
        self.handshake: HandshakeSibling | None = None
        # The server asked mid-call over 2026-07-28 and was refused: the application's calls go to the handshake era.
        self.asks_mid_call = False
        self.protocol: str | None = None
        self.catalog = ServerCatalog()
        self.instructions: str | None = None
        self.events = ConnectionEvents(config.name, self._connection_lost)
        self.restarts = 0  # in total
        self.budget = RestartBudget(config.max_restarts, options.restart)

    def stop(self) -> None:
        """End the current connection (or backoff wait) and the loop; the session is closing by then."""
        self._stop.set()
        self.events.wake.set()
        if not self.events.ready and self._connection_scope is not None:
            # Still handshaking (perhaps with a server that never answers): do not wait for it.
            self._connection_scope.cancel()

    async def run(self) -> None:
        """Connect, and reconnect after every loss, until stopped or told never to restart.

        A server that could not start the first time, or whose config turns
        restarts off, stays in state ``error`` until its session is replaced (a
        new run, or a reload that changes its entry). One that ran before is
        restarted with backoff; past its restart budget it waits in ``error``
        (tools withdrawn) until the budget has room again.
        """
        name, limit, life = self._config.name, self._config.max_restarts, self._life
        ever_ready = False
        while not life.leaving:
            self.events = ConnectionEvents(name, self._connection_lost)
            if ever_ready:
                life.set(SessionState.RESTARTING, life.reason)
            else:
                life.set(SessionState.CONNECTING, None)
            detail = await self._connect_once()
            if life.leaving:
                return
            ever_ready = ever_ready or self.events.ready
            if not ever_ready:
                return self._give_up(f"could not start: {detail}")
            if not self._config.restart_on_crash:
                return self._give_up(f"{detail}; not restarted (restartOnCrash is off)")
            now = self._now_forgiving()
            delay = self.budget.next_delay(now)
            if delay is None:
                return self._give_up(f"{detail}; not restarted (maxRestarts is 0)")
            count = self.budget.count(now)
            if count >= limit:
                self._pause(
                    f"{detail}; {_restarts(count)} within {self._options.restart.window:g}s "
                    f"(maxRestarts={limit}): starting it again in {delay:.3g}s"
                )
            else:
                life.set(SessionState.RESTARTING, f"{detail}; restart {count + 1} of {limit} in {delay:g}s")
                self._stderr.log_with_tail(logging.WARNING, f"MCP server {name!r} lost: {detail}", logger)
            with anyio.move_on_after(delay):
                await self._stop.wait()
            self.budget.record(anyio.current_time())
            self.restarts += 1

    def _now_forgiving(self) -> float:
        """The time now, once restarts before a connection that stayed up long enough are forgiven."""
        now = anyio.current_time()
        ready_at = self.events.ready_at
        if ready_at is not None and now - ready_at >= self._options.restart.stable_after:
            self.budget.forgive()
        return now

    def plan_after_loss(self) -> str:
        """What happens now that the connection was lost, for the error of a call that it failed."""
        if not self._config.restart_on_crash:
            return "it will not be restarted (restartOnCrash is off)"
        now = self._now_forgiving()
        delay = self.budget.next_delay(now)
        if delay is None:
            return "it will not be restarted (maxRestarts is 0)"
        if self.budget.spent(now):
            return (
                f"it had {_restarts(self.budget.count(now))} within {self._options.restart.window:g}s "
                f"(maxRestarts={self._config.max_restarts}), so it is started again in {delay:.3g}s; "
                "the call was not retried"
            )
        return "it is being restarted; the call was not retried"

    async def _connect_once(self) -> str:
        """Run one connection; return why it ended (empty when stopped on request)."""
        config, events = self._config, self.events
        finished = True
        try:
            with anyio.CancelScope() as self._connection_scope:
                endpoint = await anyio.to_thread.run_sync(self._endpoint)
                self._redact.update(endpoint.secrets)
                finished = await run_connection(
                    config, endpoint, self._options, self._stderr, events, on_ready=self._on_ready, relist=self._relist
                )
        except Exception as exc:
            detail = describe_exception(exc, server=config, redact=self._redact, handshake=not events.ready)
            if not events.ready:
                # The child's last words usually say why it would not start.
                tail = self._stderr.tail(1) if config.transport_kind == "stdio" else []
                return f"{detail}; stderr: {tail[0]}" if tail else detail
            if not self._life.closing:
                events.connection_lost(detail)
            return events.lost or detail
        finally:
            self.client = self.handshake = None
            self._connection_scope = None
        if not finished:
            return f"it did not finish connecting within {config.timeout:g}s (timeout)"
        return events.lost or ""

    async def client_for(self, client: Client, *, handshake: bool) -> Client:
        """The connection a request goes over, ``client`` being the ready one (see ``connect_mode``).

        A request that wants the handshake era (its caller answers questions mid-call,
        or it is a method of that era), or any call once the server asked mid-call
        over 2026-07-28, goes over the handshake-era connection kept beside it, opened
        now if need be; where there is none, or the server refused it, over ``client``.
        """
        sibling = self.handshake
        if sibling is None or client is not self.client or not (handshake or self.asks_mid_call):
            return client
        return await sibling.open() or client

    async def ask_again(self, client: Client, exc: MCPError) -> bool:
        """Whether a call that ``exc`` ended on 2026-07-28 ``client`` may be made once more in the handshake era.

        It is when the server refused a question of its own for want of a back-channel
        (a tool written against the classic API asked mid-call) and a handshake-era
        connection can be had (it is opened here); the application's later calls go there at once.
        """
        sibling = self.handshake
        refused_ask = exc.code == types.INVALID_REQUEST and _NO_BACK_CHANNEL in exc.message
        if not refused_ask or sibling is None or client is not self.client or sibling.refused is not None:
            return False
        if not self.asks_mid_call:
            logger.info(
                "MCP server %r asked in the middle of a call, which 2026-07-28 cannot carry; its calls go over "
                "the handshake era from now on",
                self._config.name,
            )
        self.asks_mid_call = True
        return await sibling.open() is not None

    def _endpoint(self) -> Endpoint:
        """The resolved connection, once the options' launch check allows it (blocking: it reads files)."""
        check = self._options.launch_check
        refusal = None if check is None else check(self._config)
        if refusal is not None:
            raise ConfigError(refusal)
        return resolve_endpoint(self._config)

    def _on_ready(self, client: Client, catalog: ServerCatalog, handshake: HandshakeSibling | None) -> None:
        if self._life.leaving:
            self.events.wake.set()
            return
        self.events.ready = True
        self.client, self.protocol, self.catalog = client, client.protocol_version, catalog
        self.handshake = handshake
        self.instructions = client.instructions
        self.events.ready_at = anyio.current_time()
        self._life.set(SessionState.READY, None)
        self._on_tools(catalog.tools)
        logger.info(
            "MCP server %r ready (protocol %s, %d tools, %d resources, %d prompts)",
            self._config.name,
            self.protocol,
            len(catalog.tools),
            len(catalog.resources),
            len(catalog.prompts),
        )

    async def _relist(self, client: Client, kinds: set[ListKind]) -> None:
        name, catalog = self._config.name, self.catalog
        if "tools" in kinds:
            catalog = replace(catalog, tools=tuple(await list_tools(client, name)))
        if "resources" in kinds:
            resources, templates = await list_resources(client, name)
            catalog = replace(catalog, resources=tuple(resources), resource_templates=tuple(templates))
        if "prompts" in kinds:
            catalog = replace(catalog, prompts=tuple(await list_prompts(client, name)))
        self.catalog = catalog
        if client is not self.client:
            return
        if "tools" in kinds:
            self._on_tools(catalog.tools)
            logger.info("MCP server %r changed its tools; it lists %d now", name, len(catalog.tools))
        for kind in ("prompts", "resources"):
            if kind in kinds:
                self._life.emit(kind)

    def _connection_lost(self, events: ConnectionEvents) -> None:
        """Fail calls fast from the moment a loss is known, before the owner task gets to run."""
        if events is self.events and self._life.state is SessionState.READY:
            self.client = self.handshake = None
            self._life.set(SessionState.RESTARTING, f"{events.lost}; reconnecting")

    def _pause(self, reason: str) -> None:
        self._life.set(SessionState.ERROR, reason)
        self._stderr.log_with_tail(
            logging.ERROR, f"MCP server {self._config.name!r} was lost too often: {reason}", logger
        )
        self._on_failed()

    def _give_up(self, reason: str) -> None:
        self._life.set(SessionState.ERROR, reason)
        self._stderr.log_with_tail(
            logging.ERROR,
            f"MCP server {self._config.name!r} is down and is not restarted: {reason}; it starts again when "
            "toolsift starts again, or at a hot reload that changes its entry",
            logger,
        )
        self._on_failed()


def _restarts(count: int) -> str:
    return f"{count} restart{'' if count == 1 else 's'}"
