"""Shared sessions: gateway throughput with 1 and 3 replicas on Redis, beside one process without Redis.

Run: python benchmarks/bench_replicas.py [--seconds 5] [--concurrency 16]

Each setup serves the same project (the example server ``general.py`` behind
the gateway) with ``jsonResponse`` on; ``--concurrency`` sessions each call
``general__echo`` in a loop through HAProxy with the example config
(``examples/balancer/haproxy.py``; Debian package ``haproxy``), as raw
JSON-RPC POSTs, for ``--seconds`` after a warm-up:

1. one process, sessions in memory (no Redis): the anchor;
2. one replica sharing its sessions in Redis;
3. three replicas sharing them, each request going to the next replica.

Everything (Redis, HAProxy, replicas and their upstream servers, this load
generator) shares this machine's cores; on a 2-core machine the ratio shows
what sharing costs more than what more machines would add.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _report import save

ROOT = Path(__file__).resolve().parent.parent
GENERAL = ROOT / "examples" / "servers" / "general.py"
BALANCER = ROOT / "examples" / "balancer" / "haproxy.py"
VERSION = "2025-11-25"


def haproxy_config(upstreams: list[str], port: int) -> str:
    """The example's HAProxy config for ``upstreams``."""
    spec = importlib.util.spec_from_file_location("haproxy_example", BALANCER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.haproxy_config(upstreams, port=port))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_project(root: Path) -> Path:
    config = {
        "skills": {"userSkills": False},
        "agents": {"default": {"permissions": {"level": "execute"}}},
        "tools": {
            "mcpServers": {
                "general": {
                    "command": sys.executable,
                    "args": [str(GENERAL)],
                    "internalOnly": False,
                    "protocol": "legacy",
                }
            }
        },
        "serve": {"gateway": True, "jsonResponse": True, "watchSkills": False},
    }
    path = root / "toolsift.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


async def post(port: int, body: dict[str, Any], session: str | None) -> tuple[bytes, bytes]:
    """One POST through the balancer (a connection per request); returns head and body."""
    data = json.dumps(body).encode()
    headers = {
        "host": f"127.0.0.1:{port}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "content-length": str(len(data)),
        "connection": "close",
    }
    if session is not None:
        headers["mcp-session-id"] = session
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(
            b"POST /mcp HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()).encode() + b"\r\n" + data
        )
        answer = await reader.read(-1)
    finally:
        writer.close()
    head, _, rest = answer.partition(b"\r\n\r\n")
    return head, rest


async def open_session(port: int) -> str:
    head, _ = await post(
        port,
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
        },
        None,
    )
    session = next(
        line.split(b":", 1)[1].strip().decode()
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"mcp-session-id:")
    )
    await post(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return session


async def calls(port: int, session: str, deadline: float, latencies: list[float] | None, errors: list[int]) -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "general__echo", "arguments": {"text": "hi"}},
    }
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        head, body = await post(port, call, session)
        if latencies is not None:
            latencies.append(time.perf_counter() - start)
            if not head.startswith(b"HTTP/1.1 200") or b'"isError":false' not in body:
                errors.append(1)


async def load(port: int, *, seconds: float, concurrency: int) -> dict[str, float]:
    sessions = [await open_session(port) for _ in range(concurrency)]
    latencies: list[float] = []
    errors: list[int] = []
    for record, duration in ((False, 1.0), (True, seconds)):  # warm-up, then measure
        started = time.perf_counter()
        deadline = started + duration
        await asyncio.gather(
            *(calls(port, session, deadline, latencies if record else None, errors) for session in sessions)
        )
        elapsed = time.perf_counter() - started
    return {
        "calls_per_second": len(latencies) / elapsed,
        "median_ms": statistics.median(latencies) * 1000,
        "p95_ms": statistics.quantiles(latencies, n=20)[18] * 1000,
        "errors": float(len(errors)),
    }


def wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    """Return once something accepts connections on loopback ``port``."""
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{process.args!r} did not start") from None
            time.sleep(0.05)


def wait_for(path: Path, process: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + 60
    while not (path.exists() and path.read_text().strip()):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{process.args!r} did not start")
        time.sleep(0.05)
    return path.read_text().strip()


def measure(
    config: Path, replicas: int, redis: str | None, *, haproxy: str, seconds: float, concurrency: int
) -> dict[str, float]:
    processes: list[subprocess.Popen[bytes]] = []
    try:
        upstreams = []
        for index in range(replicas):
            ready = config.parent / f"ready-{replicas}-{index}-{redis is not None}"
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
                "--ready-file",
                str(ready),
            ]
            if redis is not None:
                command += ["--redis", redis, "--replica", f"r{index}"]
            processes.append(
                subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
            )
            upstreams.append(wait_for(ready, processes[-1]).split("//")[1].split("/")[0])
        port = free_port()
        balancer = config.parent / f"haproxy-{replicas}-{redis is not None}.cfg"
        balancer.write_text(haproxy_config(upstreams, port), encoding="utf-8")
        processes.append(
            subprocess.Popen(
                [haproxy, "-f", str(balancer), "-db"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        wait_for_port(port, processes[-1])
        return asyncio.run(load(port, seconds=seconds, concurrency=concurrency))
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    program = shutil.which("redis-server")
    if program is None:
        sys.exit("redis-server is not installed (Debian package redis-server)")
    haproxy = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")  # Debian's root-only PATH
    if haproxy is None:
        sys.exit("haproxy is not installed (Debian package haproxy)")
    figures: dict[str, Any] = {"cpu_count": os.cpu_count(), "concurrency": args.concurrency, "seconds": args.seconds}
    redis_port = free_port()
    redis = subprocess.Popen(
        [program, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert redis.stdout is not None
        while b"Ready to accept connections" not in redis.stdout.readline():
            pass
        url = f"redis://127.0.0.1:{redis_port}/0"
        with tempfile.TemporaryDirectory(prefix="toolsift-bench-") as tmp:
            config = write_project(Path(tmp))
            for name, replicas, shared in (
                ("one_process_no_redis", 1, None),
                ("one_replica_redis", 1, url),
                ("three_replicas_redis", 3, url),
            ):
                figures[name] = measure(
                    config, replicas, shared, haproxy=haproxy, seconds=args.seconds, concurrency=args.concurrency
                )
                print(
                    f"{name}: {figures[name]['calls_per_second']:.0f} calls/s, median "
                    f"{figures[name]['median_ms']:.1f} ms, p95 {figures[name]['p95_ms']:.1f} ms, "
                    f"{figures[name]['errors']:.0f} errors",
                    flush=True,
                )
    finally:
        redis.terminate()
        redis.wait(timeout=30)
    one = figures["one_replica_redis"]["calls_per_second"]
    figures["ratio_three_to_one_replica"] = figures["three_replicas_redis"]["calls_per_second"] / one
    figures["ratio_one_replica_to_no_redis"] = one / figures["one_process_no_redis"]["calls_per_second"]
    print(
        f"3 replicas / 1 replica: {figures['ratio_three_to_one_replica']:.2f}x; "
        f"1 replica on Redis / 1 process without: {figures['ratio_one_replica_to_no_redis']:.2f}x"
    )
    save("replicas", figures)


if __name__ == "__main__":
    main()
