"""A call's progress notifications reach the gateway's client, all of them and in order, before the call's result.

The gateway sends each notification of the upstream server on to its client
while the upstream's result may already be back: the result waits for them,
or the client, whose call is over, drops the last ones.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client
from serve_project import general_server, served_http, text, write_project

from toolsift.serve import build_server

STEPS = 50  # enough notifications in flight at once for the race to show on every run


@asynccontextmanager
async def gateway_client(config: Path, transport: str, mode: str) -> AsyncIterator[Client]:
    """A client of the gateway, in this process over memory streams or over HTTP."""
    if transport == "http":
        async with served_http(config) as (url, _), Client(url, mode=mode) as client:
            yield client
    else:
        server = build_server(config)
        async with server, Client(server.sdk, mode=mode) as client:
            yield client


@pytest.mark.usefixtures("examples_in_process")
@pytest.mark.parametrize("transport", ["memory", "http"])
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_gateway_client_gets_every_progress_notification_before_the_result(
    tmp_path: Path, transport: str, mode: str
) -> None:
    config = write_project(tmp_path, serve={"gateway": True}, servers={"general": general_server()})
    seen: list[tuple[float, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, message))

    async with gateway_client(config, transport, mode) as client:
        result = await client.call_tool("general__progress", {"steps": STEPS}, progress_callback=progress)
        before_the_result = list(seen)
    assert text(result) == f"done {STEPS} steps"
    assert before_the_result == [(step, f"step {step}") for step in range(1, STEPS + 1)]
