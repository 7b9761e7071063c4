"""``toolsift serve`` throughput over HTTP (stateless), and the pipeline's added latency.

Run: python benchmarks/bench_serve.py [--seconds 5] [--concurrency 16] [--workers 1 4]

1. Calls per second: ``python -m toolsift.serve --transport http
   --stateless --json-response --workers N`` serves a project; this process sends
   ``tools/call builtin__list_directory`` as raw JSON-RPC POSTs (no SDK client, so
   the client spends as little CPU as possible) from ``--concurrency`` connections
   for ``--seconds`` after a warm-up. Client and server share this machine's cores.
2. Added latency: in process, the median time of one call of the same tool
   (``list_directory``) and of a trivial async tool (``echo``), called
   directly, through ``ToolRegistry.execute``, and through the pipeline
   ``toolsift serve`` uses (PermissionFilter, AuditTrail, SecurityGuard,
   ResultGuard with fencing, then ``execute``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
from _report import median_us, save

from toolsift.builtins import CommandPolicy, Workspace, builtin_tools
from toolsift.builtins._files import FileTools
from toolsift.mcp_sessions._untrusted import guard_result
from toolsift.pipeline import AuditTrail, Middleware, PermissionFilter, Pipeline, ResultGuard, SecurityGuard
from toolsift.registry import Level, Permissions, ToolContext, ToolRegistry
from toolsift.registry._internal import FunctionTool

CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "builtin__list_directory", "arguments": {"path": "."}},
}
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
}


def write_project(root: Path) -> Path:
    workspace = root / "ws"
    workspace.mkdir()
    for index in range(5):
        (workspace / f"file{index}.txt").write_text("x" * 100, encoding="utf-8")
    config = {
        "workspace": "ws",
        "skills": {"paths": ["skills"], "userSkills": False},
        "serve": {"stateless": True, "jsonResponse": True, "watchSkills": False},
    }
    path = root / "toolsift.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wait_ready(url: str, process: subprocess.Popen[bytes]) -> None:
    async with httpx2.AsyncClient() as http:
        with anyio.fail_after(60):
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"the server exited with {process.returncode}")
                try:
                    if (await http.post(url, json=CALL, headers=HEADERS)).status_code == 200:
                        return
                except httpx2.TransportError:
                    pass
                await anyio.sleep(0.1)


async def _connection(
    host: str, port: int, request: bytes, deadline: float, latencies: list[float] | None, errors: list[int]
) -> None:
    # A bare HTTP/1.1 keep-alive loop: an HTTP client library would spend more CPU than the server
    # under test on this 2-core machine, and the figure would measure the client.
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
            )
            body = await reader.readexactly(length)
            if latencies is not None:
                latencies.append(time.perf_counter() - start)
                if not head.startswith(b"HTTP/1.1 200") or b'"isError":false' not in body:
                    errors.append(1)
    finally:
        writer.close()


async def load(url: str, *, seconds: float, concurrency: int) -> dict[str, float]:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    body = json.dumps(CALL).encode()
    headers = "".join(f"{k}: {v}\r\n" for k, v in HEADERS.items())
    request = (
        f"POST {parts.path} HTTP/1.1\r\nhost: {host}:{port}\r\n{headers}content-length: {len(body)}\r\n\r\n"
    ).encode() + body
    latencies: list[float] = []
    errors: list[int] = []
    for record, duration in ((False, 1.0), (True, seconds)):  # warm-up, then measure
        started = time.perf_counter()
        deadline = started + duration
        await asyncio.gather(
            *(
                _connection(host, port, request, deadline, latencies if record else None, errors)
                for _ in range(concurrency)
            )
        )
        elapsed = time.perf_counter() - started
    return {
        "calls_per_second": len(latencies) / elapsed,
        "median_ms": statistics.median(latencies) * 1000,
        "p95_ms": statistics.quantiles(latencies, n=20)[18] * 1000,
        "errors": float(len(errors)),
    }


def throughput(config: Path, workers: int, *, seconds: float, concurrency: int) -> dict[str, float]:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "toolsift.serve",
        "--config",
        str(config),
        "--transport",
        "http",
        "--port",
        str(port),
        "--stateless",
        "--json-response",
        "--workers",
        str(workers),
    ]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        anyio.run(wait_ready, url, process)
        return asyncio.run(load(url, seconds=seconds, concurrency=concurrency))
    finally:
        process.terminate()
        process.wait(timeout=30)


async def echo_function(text: str) -> str:
    """Return the text."""
    return text


echo = FunctionTool(echo_function, name="echo", read_only=True)


async def median_async_us(call: Any, repeat: int) -> float:
    for _ in range(min(200, repeat)):
        await call()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


async def added_latency(workspace: Path, repeat: int) -> dict[str, float]:
    registry = ToolRegistry()
    registry.register_many([*builtin_tools(workspace), echo])
    profile = Permissions(level=Level.EXECUTE)
    pipeline = Pipeline.for_registry(
        registry,
        [
            Middleware(PermissionFilter, agent="default", permissions=profile),
            Middleware(AuditTrail, audit=registry.audit),
            Middleware(SecurityGuard, max_argument_bytes=1 << 20, commands=CommandPolicy()),
            Middleware(
                ResultGuard,
                max_bytes=1 << 20,
                untrusted=["read_file", "exec_shell"],
                fence=lambda result, name: guard_result(result, server="builtin", tool=name),
            ),
        ],
    )
    files = FileTools(Workspace(workspace))
    listing = registry.get("list_directory")
    context = ToolContext(call_id="bench")
    args = {"path": "."}
    figures = {
        "list_directory_function_us": median_us(lambda: files.list_directory("."), repeat=repeat),
        "list_directory_tool_call_us": await median_async_us(lambda: listing.call(args, context), repeat),
        "list_directory_execute_us": await median_async_us(lambda: registry.execute("list_directory", args), repeat),
        "list_directory_pipeline_us": await median_async_us(lambda: pipeline("list_directory", args), repeat),
        "echo_function_us": await median_async_us(lambda: echo_function("hi"), repeat),
        "echo_tool_call_us": await median_async_us(lambda: echo.call({"text": "hi"}, context), repeat),
        "echo_execute_us": await median_async_us(lambda: registry.execute("echo", {"text": "hi"}), repeat),
        "echo_pipeline_us": await median_async_us(lambda: pipeline("echo", {"text": "hi"}), repeat),
    }
    figures["pipeline_added_vs_tool_call_us(list_directory)"] = (
        figures["list_directory_pipeline_us"] - figures["list_directory_tool_call_us"]
    )
    figures["pipeline_added_vs_execute_us(list_directory)"] = (
        figures["list_directory_pipeline_us"] - figures["list_directory_execute_us"]
    )
    figures["pipeline_added_vs_function_us(echo)"] = figures["echo_pipeline_us"] - figures["echo_function_us"]
    figures["pipeline_added_vs_execute_us(echo)"] = figures["echo_pipeline_us"] - figures["echo_execute_us"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--repeat", type=int, default=3000)
    args = parser.parse_args()
    figures: dict[str, Any] = {"cpu_count": os.cpu_count(), "concurrency": args.concurrency, "seconds": args.seconds}
    with tempfile.TemporaryDirectory(prefix="toolsift-bench-") as tmp:
        config = write_project(Path(tmp))
        for workers in args.workers:
            result = throughput(config, workers, seconds=args.seconds, concurrency=args.concurrency)
            for key, value in result.items():
                figures[f"http_stateless_{workers}w_{key}"] = value
        figures.update(anyio.run(added_latency, Path(tmp) / "ws", args.repeat))
    save("serve", figures)


if __name__ == "__main__":
    main()
