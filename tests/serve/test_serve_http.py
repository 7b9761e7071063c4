"""``toolsift serve`` over Streamable HTTP: both eras, stateless mode, and every HTTP-level refusal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from serve_project import served_http, text, write_project
from servers import wait_for_file

from toolsift import ConfigError
from toolsift.serve import build_server, create_http_app, serve_http

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_project(tmp_path)


async def post(url: str, body: Any, **headers: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as http:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return await http.post(url, content=content, headers={**MCP_HEADERS, **headers})


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_serve_http_lists_and_calls_tools(config: Path, mode: str) -> None:
    async with served_http(config) as (url, _), Client(url, mode=mode) as client:
        assert client.server_info.name == "toolsift"
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names[:4] == [
            "builtin__read_file",
            "builtin__write_file",
            "builtin__list_directory",
            "builtin__exec_shell",
        ]
        assert "notes.txt" in text(await client.call_tool("builtin__list_directory", {}))
        assert "hello notes" in text(await client.call_tool("builtin__read_file", {"path": "notes.txt"}))
        ran = await client.call_tool("builtin__exec_shell", {"command": "ls"})
        assert "exit code 0\nnotes.txt" in text(ran)
        skill = await client.call_tool("skill__review", {"file": "notes.txt"})
        assert text(skill).startswith("Review notes.txt")


async def test_serve_http_stateless_json_serves_concurrent_clients(config: Path) -> None:
    results: list[str] = []

    async def one(url: str, index: int) -> None:
        async with Client(url, mode="legacy" if index % 2 else "auto") as client:
            result = await client.call_tool("builtin__exec_shell", {"command": f"echo client {index}"})
            results.append(result.structured_content["stdout"].strip())

    async with served_http(config, stateless=True, json_response=True) as (url, _), anyio.create_task_group() as group:
        for index in range(6):
            group.start_soon(one, url, index)
    assert sorted(results) == [f"client {index}" for index in range(6)]


async def test_serve_http_requires_the_bearer_token(config: Path) -> None:
    async with served_http(config, token="s3cret-token") as (url, _):
        missing = await post(url, INITIALIZE)
        wrong = await post(url, INITIALIZE, authorization="Bearer nope")
        basic = await post(url, INITIALIZE, authorization="Basic s3cret-token")
        for response in (missing, wrong, basic):
            assert response.status_code == 401
            assert response.headers["www-authenticate"].startswith("Bearer")
            assert response.json()["error"]["message"].startswith("Missing or wrong bearer token")
            assert "s3cret" not in response.text
        async with (
            httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token"}) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            assert not (await client.call_tool("builtin__read_file", {"path": "notes.txt"})).is_error


async def test_serve_http_token_may_come_from_the_environment(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIFT_TEST_TOKEN", "from-env")
    server = build_server(config, token="${TOOLSIFT_TEST_TOKEN}")
    assert server.settings.token is not None
    assert server.settings.token.get_secret_value() == "from-env"
    assert "from-env" not in repr(server) + repr(server.settings)


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("http://evil.example", 403),
        ("null", 403),
        ("http://localhost:{port}", 200),
        ("http://[::1]:{port}", 200),
        ("http://127.0.0.1:{port}", 200),
        ("https://localhost:{other}", 403),
        ("http://localhost:{other}", 403),
        ("http://localhost", 403),
        ("https://app.example.com", 200),
        ("http://dev.example.com:5173", 200),
        ("http://dev.example.com:x", 403),
    ],
)
async def test_serve_http_admits_only_its_own_origin_and_configured_ones(
    config: Path, origin: str, status: int
) -> None:
    origins = ["https://app.example.com", "http://dev.example.com:*"]
    async with served_http(config, allowed_origins=origins) as (url, _):
        port = urlsplit(url).port
        origin = origin.format(port=port, other=port + 1 if port < 65535 else port - 1)
        response = await post(url, INITIALIZE, origin=origin)
        assert response.status_code == status
        if status == 403:
            assert response.json()["error"]["message"] == (
                f"Origin {origin!r} is not allowed; only this server's own origin (a loopback name, port {port}) "
                "may call it unless listed in serve.allowedOrigins"
            )


async def test_serve_http_refuses_foreign_host_headers(config: Path) -> None:
    async with served_http(config) as (url, _):
        response = await post(url, INITIALIZE, host="attacker.example:8765")
        assert response.status_code == 421
        assert "DNS rebinding protection" in response.json()["error"]["message"]


async def test_serve_http_bounds_request_size(config: Path) -> None:
    async with served_http(config, max_request_bytes=2048) as (url, _):
        huge = {**INITIALIZE, "params": {**INITIALIZE["params"], "padding": "x" * 4096}}
        response = await post(url, huge)
        assert response.status_code == 413
        async with Client(url) as client:
            assert not (await client.call_tool("builtin__list_directory", {})).is_error


async def test_serve_http_answers_malformed_json_rpc_and_keeps_serving(config: Path) -> None:
    async with served_http(config) as (url, _):
        garbage = await post(url, b"{not json")
        assert garbage.json()["error"]["code"] == -32700
        not_rpc = await post(url, {"hello": "world"})
        assert not_rpc.status_code == 400
        async with Client(url, mode="legacy") as client:
            result = await client.call_tool("nope", {})
            assert result.is_error
            assert text(result).startswith("Unknown tool 'nope'")
            assert not (await client.call_tool("builtin__list_directory", {})).is_error


async def test_serve_http_refuses_public_binding_without_token(config: Path) -> None:
    server = build_server(config, host="0.0.0.0")
    with pytest.raises(ConfigError, match="refusing to serve on '0.0.0.0' without a token"):
        create_http_app(server)
    create_http_app(build_server(config, host="0.0.0.0", token="t"))


async def test_serve_http_reports_startup_failures(config: Path) -> None:
    server = build_server(config, transport="http", port=0)
    async with server:
        pass
    async with anyio.create_task_group() as group:
        with pytest.raises(RuntimeError, match="A ToolsiftServer can be entered once"):
            await group.start(serve_http, server)


@pytest.mark.parametrize("workers", [1, 2])
async def test_serve_module_over_http_writes_its_ready_file(config: Path, tmp_path: Path, workers: int) -> None:
    ready = tmp_path / "ready"
    command = [
        sys.executable,
        "-m",
        "toolsift.serve",
        "--config",
        str(config),
        "--transport",
        "http",
        "--port",
        "0",
        "--stateless",
        "--json-response",
        "--ready-file",
        str(ready),
        "--workers",
        str(workers),
    ]
    process = await anyio.open_process(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        url = (await wait_for_file(ready, process=process)).strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        async with Client(url) as client:
            assert "hello notes" in text(await client.call_tool("builtin__read_file", {"path": "notes.txt"}))
    finally:
        process.terminate()
        await process.wait()
        await process.aclose()
