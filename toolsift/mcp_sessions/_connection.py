"""One connection to a server, from spawn or dial to teardown, run inside the session's owner task.

Everything that has to be entered and exited in the same task lives here: the
transport, the SDK ``Client``, the watchers that follow the server's
list-changed announcements (a ``message_handler`` on handshake-era
connections, a ``subscriptions/listen`` stream on 2026-07-28 ones), and,
beside a 2026-07-28 connection over HTTP, the handshake-era one that some
calls need (``_handshake``; :func:`connect_mode` states the rule).
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from importlib import metadata

import anyio
import mcp.types as types
from mcp import Client, MCPError
from mcp.client.context import ClientRequestContext
from mcp.client.session import IncomingMessage, ListRootsFnT
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from .._exceptions import SessionError
from ..config import ServerConfig
from ._catalog import ServerCatalog, list_catalog
from ._connection_events import ConnectionEvents, ListKind
from ._endpoint import Endpoint
from ._handshake import HandshakeSibling
from ._list_changes import followed_lists, listen
from ._oauth import sign_in_flow
from ._options import SessionOptions
from ._stderr import StderrBuffer
from ._transport import ConnectionWatcher, TransportContext, open_transport, transport_for

__all__ = ["CLIENT_INFO", "connect_mode", "run_connection", "two_eras"]

logger = logging.getLogger("toolsift.mcp_sessions")

_NOTIFICATION_KINDS: dict[type, ListKind] = {
    types.ToolListChangedNotification: "tools",
    types.ResourceListChangedNotification: "resources",
    types.PromptListChangedNotification: "prompts",
}


def _version() -> str:
    try:
        return metadata.version("toolsift")
    except metadata.PackageNotFoundError:  # pragma: no cover - only when run from a bare checkout
        return "0"


CLIENT_INFO = types.Implementation(name="toolsift", version=_version())


OnReady = Callable[[Client, ServerCatalog, HandshakeSibling | None], None]
Relister = Callable[[Client, set[ListKind]], Awaitable[None]]


async def run_connection(
    config: ServerConfig,
    endpoint: Endpoint,
    options: SessionOptions,
    stderr: StderrBuffer,
    events: ConnectionEvents,
    *,
    on_ready: OnReady,
    relist: Relister,
) -> bool:
    """Connect, list, report ready, and serve until ``events.wake`` is set.

    The transport is the one ``options.transports`` names for the server, else
    the one of the endpoint's kind.

    Returns False when connecting did not finish within ``config.timeout``
    (True otherwise, whether or not it connected). Any other failure is
    raised, possibly wrapped in exception groups by the SDK.

    Where ``auto`` prefers the handshake era (see :func:`connect_mode`) and the
    server refuses ``initialize`` the way a server of 2026-07-28 alone does, the
    server is connected again at the newest 2026-era version: a server that
    speaks one era is reached in it, whatever the preference. (Not with the SDK's
    ``auto``, whose fallback would offer the refused handshake once more.)
    """
    preferred = connect_mode(config, options)
    ready = False

    def readied(client: Client, catalog: ServerCatalog, sibling: HandshakeSibling | None) -> None:
        nonlocal ready
        ready = True
        on_ready(client, catalog, sibling)

    try:
        return await _connect(preferred, config, endpoint, options, stderr, events, on_ready=readied, relist=relist)
    except Exception as exc:
        if ready or preferred == config.protocol or not _refuses_handshake(exc):
            raise
        logger.info("MCP server %r refused the handshake (%s); connecting in the 2026 era", config.name, exc)
    latest = max(MODERN_PROTOCOL_VERSIONS)
    return await _connect(latest, config, endpoint, options, stderr, events, on_ready=on_ready, relist=relist)


def _refuses_handshake(exc: BaseException) -> bool:
    """Whether ``exc`` (or the one error an SDK exception group holds) is a server's refusal of ``initialize``.

    A server of 2026-07-28 alone answers it with a header or version error, knows
    no such method, or answers with its own version, which the SDK's handshake
    refuses with a ``RuntimeError`` naming it.
    """
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, RuntimeError):
        return any(version in str(exc) for version in MODERN_PROTOCOL_VERSIONS)
    return isinstance(exc, MCPError) and exc.code in _HANDSHAKE_REFUSALS


# The answers of a 2026-07-28 server to `initialize`: it asks for the per-request headers, or another version.
_HANDSHAKE_REFUSALS = frozenset({types.HEADER_MISMATCH, types.UNSUPPORTED_PROTOCOL_VERSION, types.METHOD_NOT_FOUND})


async def _connect(
    mode: str,
    config: ServerConfig,
    endpoint: Endpoint,
    options: SessionOptions,
    stderr: StderrBuffer,
    events: ConnectionEvents,
    *,
    on_ready: OnReady,
    relist: Relister,
) -> bool:
    """One connection in SDK connect mode ``mode``, as :func:`run_connection` describes."""
    connect_deadline = anyio.CancelScope(deadline=anyio.current_time() + config.timeout)
    # The deadline scope encloses the whole life of the Client: the Client's task
    # groups are entered inside it, so it cannot be a fail_after around the
    # entering alone. Once ready, the deadline is lifted.
    with connect_deadline:
        opened = _open_client(mode, config, endpoint, options, stderr, events, events.request_relist)
        async with opened as client, anyio.create_task_group() as watchers:
            modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
            followed = followed_lists(client) if modern else frozenset()
            if followed:
                # Listened to before the first listing: a change made after that listing is always heard.
                await watchers.start(listen, client, events, followed)
            catalog = await list_catalog(client, config.name)
            connect_deadline.deadline = math.inf
            sibling = (
                HandshakeSibling(config.name, events, config.timeout) if modern and two_eras(config, options) else None
            )
            watchers.start_soon(_relist_loop, client, events, relist)
            if sibling is not None:

                def unfollowed(kind: ListKind) -> None:
                    # What the listen stream follows, the handshake-era connection hears too: list once.
                    if kind not in followed:
                        events.request_relist(kind)

                watchers.start_soon(
                    sibling.run,
                    partial(_open_client, "legacy", config, endpoint, options, stderr, relist=unfollowed),
                )
            on_ready(client, catalog, sibling)
            await events.wake.wait()
            watchers.cancel_scope.cancel()
    return not connect_deadline.cancelled_caught


@asynccontextmanager
async def _open_client(
    mode: str,
    config: ServerConfig,
    endpoint: Endpoint,
    options: SessionOptions,
    stderr: StderrBuffer,
    watcher: ConnectionWatcher,
    relist: Callable[[ListKind], None],
) -> AsyncIterator[Client]:
    """An SDK ``Client`` in connect mode ``mode`` on a fresh transport, entered (and discovered, when pinned).

    ``watcher`` hears of the transport's end and odd messages; ``relist`` of a
    handshake-era list-changed notification (2026-07-28 ones come on the listen stream).
    """
    async with AsyncExitStack() as stack:
        context = TransportContext(
            server=config.name,
            watcher=watcher,
            stderr=stderr,
            connect_timeout=config.timeout,
            max_message_bytes=config.max_result_bytes,
            auth=sign_in_flow(config, endpoint, options.callbacks.sign_in),
        )
        chosen = options.transports.get(config.name) or transport_for(endpoint)
        transport = await open_transport(chosen, stack, context)
        modern = False

        async def on_message(message: IncomingMessage) -> None:
            # On 2026-07-28 connections the listen stream delivers the same events; act once.
            kind = _NOTIFICATION_KINDS.get(type(message))
            if kind is not None and not modern:
                relist(kind)
            elif isinstance(message, types.ResourceUpdatedNotification):
                await options.callbacks.resource_changed(config.name, str(message.params.uri))

        client = Client(
            transport,
            mode=mode,
            read_timeout_seconds=config.timeout,
            message_handler=on_message,
            list_roots_callback=_roots_callback(options) if options.workspace or options.roots else None,
            client_info=CLIENT_INFO,
            **options.callbacks.for_server(config.name),
        )
        await stack.enter_async_context(client)
        if client.mode in MODERN_PROTOCOL_VERSIONS:
            await _discover_pinned(client, client.mode, pinned=config.protocol == client.mode)
        modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
        yield client


def two_eras(config: ServerConfig, options: SessionOptions) -> bool:
    """Whether the session keeps a handshake-era connection beside a 2026-07-28 one (see :func:`connect_mode`)."""
    return config.protocol == "auto" and options.callbacks.answers_requests and config.transport_kind != "stdio"


def connect_mode(config: ServerConfig, options: SessionOptions) -> str:
    """The SDK's connect mode of a session's (first) connection; ``auto`` may add a handshake-era one.

    The rule under ``protocol: auto``, for a session whose callbacks answer
    servers' requests (sampling, elicitation: a gateway's, a chat's):

    - A server written against the classic API asks from inside a tool, which a
      2026-07-28 connection gives it no channel for ("no back-channel"); a
      server of 2026-07-28 asks by ``InputRequiredResult``, which carries
      per-request capabilities and tasks as the handshake era cannot.
    - Over HTTP, where a connection is cheap, the session connects as the SDK
      does (``server/discover`` first: a server of either era is reached in its
      newest), and beside a 2026-07-28 connection it keeps one of the handshake
      era, opened at first need, for the calls whose caller answers questions
      mid-call: a gateway's handshake-era client, and any call after the server
      refused a question of its own for want of a back-channel (the refused call
      is made once more there only when its tool is read-only or idempotent;
      see ``McpSession.call_tool``). A gateway's 2026-07-28
      client's calls stay on the 2026-07-28 connection, so its questions, tasks
      and capabilities pass as they are.
    - Over stdio (one process, its state shared by whatever connects) there is
      one connection, of the handshake era, as classic servers need it; a server
      of 2026-07-28 alone that refuses the handshake is connected again in 2026.
    """
    if config.protocol == "auto" and options.callbacks.answers_requests and not two_eras(config, options):
        return "legacy"
    return config.protocol


async def _discover_pinned(client: Client, version: str, *, pinned: bool) -> None:
    """Learn a pinned-version server's capabilities: the SDK adopts a pin with none at all.

    ``pinned`` says whether the config chose the version (else the server refused the handshake era).
    """
    try:
        raw = await client.session.send_discover(version)
    except MCPError as exc:
        why = (
            f"the config pins protocol {version}, which the server does not speak"
            if pinned
            else f"the server refused the handshake, and protocol {version} too"
        )
        fix = "; use protocol: auto to fall back to the handshake" if pinned else ""
        raise SessionError(f"{why} (server/discover: {exc.message}){fix}") from exc
    discovered = types.DiscoverResult.model_validate(raw)
    client.session.adopt(discovered.model_copy(update={"supported_versions": [version]}))


def _roots_callback(options: SessionOptions) -> ListRootsFnT:
    folders = [path.resolve() for path in (options.workspace, *options.roots) if path is not None]
    roots = [
        types.Root(uri=folder.as_uri(), name=folder.name or str(folder))  # type: ignore[arg-type]
        for folder in dict.fromkeys(folders)
    ]

    async def list_roots(context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=roots)

    return list_roots


async def _relist_loop(client: Client, events: ConnectionEvents, relist: Relister) -> None:
    while True:
        kinds = await events.next_relist()
        try:
            await relist(client, kinds)
        except Exception as exc:
            logger.warning(
                "MCP server %r announced a change of its %s, but listing them again failed: %s",
                events.server,
                "/".join(sorted(kinds)),
                exc,
            )
