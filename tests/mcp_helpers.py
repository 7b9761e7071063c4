"""Building session configs for the example servers, and small waits for session tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from servers import stdio_params

from toolsift.config import ServerConfig
from toolsift.mcp_sessions import McpSession, RestartPolicy, SessionEvent, SessionOptions, SessionState

TESTS = Path(__file__).resolve().parent
# Restarts in tests wait milliseconds, not the production 1 s doubling to 30 s.
FAST = SessionOptions(restart=RestartPolicy(initial_delay=0.01, max_delay=0.05))


def stdio_server(name: str, script: str, *args: str, env: dict[str, str] | None = None,
                 **fields: Any) -> ServerConfig:
    """A stdio server config for ``examples/servers/<script>`` named ``name``."""
    params = stdio_params(script, *args)
    return ServerConfig(command=params.command, args=tuple(params.args), env=env or {}, **fields).with_name(name)


def local_server(name: str, script: str, *args: str, **fields: Any) -> ServerConfig:
    """A stdio server config for a server script of ``tests/``."""
    return stdio_server(name, str(TESTS / script), *args, **fields)


async def wait_for(session: McpSession, condition: Callable[[McpSession], bool], timeout: float = 10.0) -> None:
    """Wait (event-driven) until ``condition(session)`` holds after one of the session's events."""
    reached = anyio.Event()

    def watch(event: SessionEvent) -> None:
        if condition(session):
            reached.set()

    unsubscribe = session.subscribe(watch)
    try:
        if not condition(session):
            with anyio.fail_after(timeout):
                await reached.wait()
    finally:
        unsubscribe()


async def wait_for_state(session: McpSession, *states: SessionState, timeout: float = 10.0) -> None:
    """Wait until the session is in one of ``states``."""
    await wait_for(session, lambda s: s.state in states, timeout)
