"""Building session configs for the example servers, running them in memory, and waits for session events."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from mcp.client import Transport
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from servers import example_module, stdio_params

from toolsift.config import ServerConfig, StdioServer, ToolsiftConfig
from toolsift.mcp_sessions import McpSession, SessionOptions
from toolsift.mcp_sessions._internal import SessionState
from toolsift.mcp_sessions._options import RestartPolicy
from toolsift.mcp_sessions._session import SessionEvent
from toolsift.mcp_sessions._transport import MemoryTransport, SessionTransport, TransportContext

TESTS = Path(__file__).resolve().parent
# Restarts in tests wait milliseconds, not the production 1 s doubling to 30 s.
FAST = SessionOptions(restart=RestartPolicy(initial_delay=0.01, max_delay=0.05))


def stdio_server(name: str, script: str, *args: str, env: dict[str, str] | None = None, **fields: Any) -> ServerConfig:
    """A stdio server config for ``examples/servers/<script>`` named ``name``."""
    params = stdio_params(script, *args)
    return StdioServer(command=params.command, args=tuple(params.args), env=env or {}, **fields).with_name(name)


def local_server(name: str, script: str, *args: str, **fields: Any) -> ServerConfig:
    """A stdio server config for a server script of ``tests/``."""
    return stdio_server(name, str(TESTS / script), *args, **fields)


def example_server(script: str) -> MCPServer:
    """The ``MCPServer`` of ``examples/servers/<script>`` (or of a script at an absolute path), in this process."""
    server = example_module(script).mcp
    assert isinstance(server, MCPServer)
    return server


def local_server_object(script: str) -> MCPServer:
    """The ``MCPServer`` of a server script of ``tests/``, in this process."""
    return example_server(str(TESTS / script))


def faulty(**faults: Any) -> Server[Any]:
    """``examples/servers/faulty.py``'s server with ``faults`` (its ``Faults`` fields; none of the stdio-only ones)."""
    module = example_module("faulty.py")
    server = module.build_server(module.Faults(**faults), None)
    assert isinstance(server, Server)
    return server


def in_memory(servers: dict[str, Server[Any] | MCPServer], options: SessionOptions = FAST) -> SessionOptions:
    """``options`` with each named server reached in this process, over memory streams.

    The sessions still resolve and check their configs (a ``stdio_server`` of
    the same example, say); only the connection skips the child process. Tests
    whose point is the process (its crash, its stderr, its environment, its
    group) keep a real one.
    """
    return replace(options, transports={name: MemoryTransport(server) for name, server in servers.items()})


ServerObject = Server[Any] | MCPServer


class BuiltAtFirstConnection:
    """A :class:`MemoryTransport` whose server is built when a session first connects, then shared as usual:
    a fixture may offer a costly server to every test that names it without building it for the others."""

    def __init__(self, build: Callable[[], ServerObject]) -> None:
        self._build = build
        self._built: MemoryTransport | None = None

    async def open(self, stack: AsyncExitStack, context: TransportContext) -> Transport:
        if self._built is None:
            self._built = MemoryTransport(self._build())
        return await self._built.open(stack, context)


def reach_everywhere(monkeypatch: pytest.MonkeyPatch, transports: dict[str, SessionTransport]) -> None:
    """Reach each named server through its transport wherever options are built from a config (Toolbox, serve,
    CLI): the composition root builds its session options with ``SessionOptions.for_config``, which this wraps.
    Servers not named still start as their config says."""
    for_config = SessionOptions.for_config

    def options(config: ToolsiftConfig) -> SessionOptions:
        built = for_config(config)
        return replace(built, transports={**built.transports, **transports})

    monkeypatch.setattr(SessionOptions, "for_config", staticmethod(options))


def in_memory_everywhere(
    monkeypatch: pytest.MonkeyPatch, servers: dict[str, ServerObject | Callable[[], ServerObject]]
) -> None:
    """Reach each named server in this process wherever options are built from a config (see
    :func:`reach_everywhere`), as :func:`in_memory` does for options a test builds itself.
    A server given as a function is built when a session first connects to it.
    """
    reach_everywhere(
        monkeypatch,
        {
            name: MemoryTransport(server) if isinstance(server, Server | MCPServer) else BuiltAtFirstConnection(server)
            for name, server in servers.items()
        },
    )


async def wait_for(session: McpSession, condition: Callable[[McpSession], bool]) -> None:
    """Wait until ``condition(session)`` holds after one of the session's events; only the hang guard limits it."""
    reached = anyio.Event()

    def watch(event: SessionEvent) -> None:
        if condition(session):
            reached.set()

    unsubscribe = session.subscribe(watch)
    try:
        if not condition(session):
            await reached.wait()
    finally:
        unsubscribe()


async def wait_for_state(session: McpSession, *states: SessionState) -> None:
    """Wait until the session is in one of ``states``."""
    await wait_for(session, lambda s: s.state in states)


INTEROP = TESTS.parent / "interop"


def interop_module(script: str) -> ModuleType:
    """``interop/<script>`` imported into this process once, its sibling modules importable while it loads.

    ``sys.path`` is restored afterwards (the fixtures put the examples' folder on it when they load).
    """
    saved = list(sys.path)
    sys.path.insert(0, str(INTEROP))
    try:
        return example_module(str(INTEROP / script))
    finally:
        sys.path[:] = saved


@asynccontextmanager
async def fixture_2026_in_process() -> AsyncIterator[MCPServer]:
    """``interop/fixture_2026.py``'s server in this process, its Tasks extension running, for ``in_memory``.

    Its stdio entry point runs the extension's task group around serving; this does the same around a test.
    """
    module = interop_module("fixture_2026.py")
    server = module.mcp
    assert isinstance(server, MCPServer)
    async with module.tasks.running():
        yield server


@asynccontextmanager
async def served_in_process(
    monkeypatch: pytest.MonkeyPatch,
    servers: dict[str, Path],
    also: dict[str, Server[Any] | MCPServer] | None = None,
) -> AsyncIterator[None]:
    """``toolsift serve --config PATH`` of each named config in this process, reached in memory wherever a
    config names the server, as are the servers of ``also`` (see :func:`in_memory_everywhere`): for what one
    toolsift takes from another."""
    from toolsift.serve import build_server

    async with AsyncExitStack() as stack:
        upstream = {name: await stack.enter_async_context(build_server(path)) for name, path in servers.items()}
        in_memory_everywhere(monkeypatch, {**{name: server.sdk for name, server in upstream.items()}, **(also or {})})
        yield
