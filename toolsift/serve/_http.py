"""Serving over Streamable HTTP: the ASGI app, an in-process uvicorn, and multi-worker uvicorn.

One app serves both protocol eras on one endpoint (the SDK's session
manager), stateful or stateless. Stateless mode keeps no session between
requests, which is what lets several uvicorn workers, or several machines
behind a load balancer, serve one config: each worker builds its own server
from the config file (:func:`app_from_environment`).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from anyio.abc import TaskStatus
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route
from starlette.types import ASGIApp
from uvicorn.supervisors import Multiprocess

from .._exceptions import ConfigError
from .._net import is_loopback
from ..config import ProjectTrust, TrustedLaunches
from ..config._internal import ServeSettings
from ._endpoints import SEGMENTS, EndpointKey, ScopedEndpoint
from ._guard import HttpGuard
from ._health import HEALTH_PATH, READY_PATH, health_routes
from ._load import load_serve_config
from ._replicas import SharedSessionManager
from ._server import ToolsiftServer
from ._state_key import ENV_STATE_KEY
from ._used_approvals import workers_folder

__all__ = ["ENV_CONFIG", "ENV_SETTINGS", "app_from_environment", "create_http_app", "run_http_workers", "serve_http"]

logger = logging.getLogger("toolsift.serve")

ENV_CONFIG = "TOOLSIFT_SERVE_CONFIG"
ENV_SETTINGS = "TOOLSIFT_SERVE_SETTINGS"
# What a project's config may launch, handed to the workers (see TrustedLaunches).
ENV_TRUST = "TOOLSIFT_SERVE_TRUST"
# Open SSE streams hold a graceful shutdown until they end; past this, they are cut.
_GRACEFUL_SECONDS = 2


def check_binding(settings: ServeSettings) -> None:
    """Refuse to expose the server beyond this machine without a token.

    Raises:
        ConfigError: When ``host`` is not loopback and no ``token`` is set.
    """
    if settings.token is None and not is_loopback(settings.host):
        raise ConfigError(
            f"refusing to serve on {settings.host!r} without a token: anyone who can reach that address could "
            'run the served tools; set serve.token (for example "${TOOLSIFT_TOKEN}") or bind 127.0.0.1',
            field="serve.host",
        )


def create_http_app(server: ToolsiftServer) -> Starlette:
    """The server as an ASGI app (Starlette): the MCP endpoint at ``settings.path``, ``/healthz`` and ``/readyz``.

    Under the MCP endpoint, ``<path>/skills/<name>`` and ``<path>/agents/<name>``
    serve one skill's or one agent profile's scope (a 404 names the ones served).

    With ``settings.shared``, sessions live in Redis and any replica serves
    them (:class:`toolsift.serve.SharedSessionManager`); otherwise in this process.

    The app's lifespan enters ``server`` and the SDK's session manager, so run
    it under a server that runs lifespans (uvicorn does). Each app is started once.

    Raises:
        ConfigError: When the settings would expose the server without a token.
    """
    settings = server.settings
    check_binding(settings)
    manager, endpoint = _session_manager(server)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            async with server, manager.run():
                app.state.ready = True
                try:
                    yield
                finally:
                    app.state.ready = False
        except Exception as exc:
            # uvicorn reports a failed startup by exiting; keep the cause for serve_http.
            app.state.startup_error = exc
            raise

    token = settings.token.get_secret_value() if settings.token is not None else None
    guard = Middleware(
        HttpGuard,
        token=token,
        allowed_origins=settings.allowed_origins,
        check_host=is_loopback(settings.host),
        open_paths=(HEALTH_PATH, READY_PATH),
    )
    # Skill and agent endpoints: one scope each, for clients whose tool list may not vary by connection.
    scoped = ScopedEndpoint(endpoint, server.endpoints)
    routes = [
        Route(settings.path, endpoint=endpoint),
        *(Route(EndpointKey(kind, f"{{{kind}}}").path(settings.path), endpoint=scoped) for kind in SEGMENTS),
        *health_routes(server),
    ]
    return Starlette(routes=routes, middleware=[guard], lifespan=lifespan)


def _session_manager(server: ToolsiftServer) -> tuple[StreamableHTTPSessionManager | SharedSessionManager, ASGIApp]:
    """Who keeps the sessions (Redis, shared by replicas; or this process), and the MCP endpoint it serves."""
    settings = server.settings
    # HttpGuard checks Origin and Host with toolsift's settings and messages.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    if server.shared is not None:
        shared = SharedSessionManager(
            server.sdk,
            server.shared,
            repeatable=server.repeatable,
            json_response=settings.json_response,
            security_settings=security,
            max_request_body_size=settings.max_request_bytes,
        )
        return shared, shared
    manager = StreamableHTTPSessionManager(
        app=server.sdk,
        json_response=settings.json_response,
        stateless=settings.stateless,
        security_settings=security,
        max_request_body_size=settings.max_request_bytes,
    )
    return manager, StreamableHTTPASGIApp(manager)


def _url(settings: ServeSettings, sock: socket.socket) -> str:
    """The URL clients use for a bound socket (its real port, when the settings asked for port 0)."""
    port = sock.getsockname()[1]
    host = f"[{settings.host.strip('[]')}]" if ":" in settings.host else settings.host
    return f"http://{host}:{port}{settings.path}"


def _bind(host: str, port: int) -> socket.socket:
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio enables TCP_NODELAY only on sockets that say so, and
    # without it a keep-alive connection waits ~40 ms per response for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
        sock.listen(512)
    except OSError:
        sock.close()
        raise
    return sock


class _Uvicorn(uvicorn.Server):
    """A uvicorn server that says when it accepts connections."""

    def __init__(self, config: uvicorn.Config, ready: anyio.Event) -> None:
        super().__init__(config)
        self._ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self._ready.set()


async def serve_http(server: ToolsiftServer, *, task_status: TaskStatus[str] = anyio.TASK_STATUS_IGNORED) -> None:
    """Serve over Streamable HTTP in this event loop until cancelled.

    Use ``url = await task_group.start(serve_http, server)``: it returns the
    endpoint's URL once the socket is bound and the server (skills, gateway
    sessions) has started. ``settings.workers`` is ignored here (one process);
    see :func:`run_http_workers`.

    On cancellation, uvicorn stops accepting, gives open streams a short grace
    period, and the server is closed; the call returns when all of that is done.

    Raises:
        ConfigError: When the settings would expose the server without a token.
        OSError: When the address cannot be bound.
        Exception: Whatever made the server fail to start (a missing gateway skill...).
    """
    settings = server.settings
    app = create_http_app(server)
    sock = _bind(settings.host, settings.port)
    url = _url(settings, sock)
    config = uvicorn.Config(
        app, lifespan="on", log_level="warning", timeout_graceful_shutdown=_GRACEFUL_SECONDS, access_log=False
    )
    ready, done = anyio.Event(), anyio.Event()
    instance = _Uvicorn(config, ready)

    async def run() -> None:
        try:
            # Shielded: uvicorn must finish its own shutdown once should_exit is set.
            with anyio.CancelScope(shield=True):
                await instance.serve(sockets=[sock])
        except SystemExit:
            pass  # a failed startup; the cause is in app.state
        finally:
            sock.close()
            done.set()
            ready.set()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        try:
            await ready.wait()
            if instance.started:
                logger.info("toolsift serving MCP on %s", url)
                task_status.started(url)
                await done.wait()
        finally:
            instance.should_exit = True
    if not instance.started:
        error = getattr(app.state, "startup_error", None)
        raise error if error is not None else RuntimeError(f"the HTTP server on {url} failed to start")


def app_from_environment() -> Starlette:
    """The app of one uvicorn worker, built from ``$TOOLSIFT_SERVE_CONFIG`` and ``$TOOLSIFT_SERVE_SETTINGS``.

    ``uvicorn --factory toolsift.serve._http:app_from_environment`` runs it.

    Raises:
        ConfigError: When ``$TOOLSIFT_SERVE_CONFIG`` is unset or the config is invalid.
    """
    path = os.environ.get(ENV_CONFIG)
    if not path:
        raise ConfigError(f"set {ENV_CONFIG} to the config file the workers should serve")
    config, settings = load_serve_config(path)
    overrides = os.environ.get(ENV_SETTINGS)
    if overrides:
        settings = ServeSettings.model_validate(json.loads(overrides))
    trust = os.environ.get(ENV_TRUST)
    # A worker process serves this app and nothing else: its heap is toolsift's to settle.
    return create_http_app(
        ToolsiftServer(config, settings, trust=_trust_from_json(trust) if trust else None, settle_heap=True)
    )


def _trust_json(trust: TrustedLaunches) -> str:
    return json.dumps(
        {"store": str(trust.store.store.absolute()), "path": str(trust.path.absolute()), "accepted": trust.accepted}
    )


def _trust_from_json(text: str) -> TrustedLaunches:
    data = json.loads(text)
    return TrustedLaunches(ProjectTrust(Path(data["store"])), Path(data["path"]), data["accepted"])


def _settings_json(settings: ServeSettings) -> str:
    data: dict[str, Any] = settings.model_dump(mode="json")
    if settings.token is not None:
        data["token"] = settings.token.get_secret_value()
    if settings.shared is not None:
        data["shared"]["redis"] = settings.shared.redis.get_secret_value()
    return json.dumps(data)


def run_http_workers(
    config_path: str | os.PathLike[str],
    settings: ServeSettings,
    announce: Callable[[str], None] | None = None,
    *,
    trust: TrustedLaunches | None = None,
) -> None:
    """Serve with ``settings.workers`` uvicorn processes until interrupted (blocking).

    Each worker loads the config itself; ``settings`` (overrides included)
    and ``trust`` (what a project's config may launch) reach them through the
    environment. Workers share the listening socket,
    so the server must be stateless (``ServeSettings`` enforces it).
    ``announce`` gets the URL once the socket listens: from then on a client's
    connection is accepted, and answered as soon as a worker has started.
    Unless ``$TOOLSIFT_REQUEST_STATE_KEY`` is set, the workers seal
    ``requestState`` with a key made for the run and record used approvals
    in a private folder of the run (removed when it ends).

    Raises:
        ConfigError: When the settings would expose the server without a token.
    """
    check_binding(settings)
    with ExitStack() as run:
        # An approval asked by one worker may be answered on another: they seal requestState with one key,
        # and a key made for this run reaches these workers only, so a folder of theirs keeps each yes to one call.
        if not os.environ.get(ENV_STATE_KEY):
            os.environ[ENV_STATE_KEY] = secrets.token_hex(32)
            if settings.shared is None and settings.approval_folder is None:
                settings = settings.model_copy(update={"approval_folder": run.enter_context(workers_folder())})
        _run_workers(config_path, settings, announce, trust)


def _run_workers(
    config_path: str | os.PathLike[str],
    settings: ServeSettings,
    announce: Callable[[str], None] | None,
    trust: TrustedLaunches | None,
) -> None:
    """Hand the workers their config, settings and trust through the environment, and run them."""
    os.environ[ENV_CONFIG] = str(Path(config_path).absolute())
    os.environ[ENV_SETTINGS] = _settings_json(settings)
    if trust is not None:
        os.environ[ENV_TRUST] = _trust_json(trust)
    else:
        os.environ.pop(ENV_TRUST, None)
    config = uvicorn.Config(
        "toolsift.serve._http:app_from_environment",
        factory=True,
        host=settings.host.strip("[]"),
        port=settings.port,
        workers=settings.workers,
        lifespan="on",
        log_level="warning",
        timeout_graceful_shutdown=_GRACEFUL_SECONDS,
        access_log=False,
    )
    # uvicorn.run would bind a socket that asyncio does not give TCP_NODELAY (see _bind).
    sock = _bind(settings.host, settings.port)
    sock.set_inheritable(True)
    try:
        if announce is not None:
            announce(_url(settings, sock))
        Multiprocess(config, sockets=[sock]).run()
    finally:
        sock.close()
