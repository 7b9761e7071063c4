"""Gateway replicas for the shared-session tests: a real redis-server, replica processes, HAProxy in front."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import shutil
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from servers import stop_process, wait_for_file
from waits import poll_until

BALANCER = Path(__file__).resolve().parent.parent / "examples" / "balancer" / "haproxy.py"


def haproxy_example() -> ModuleType:
    """The example balancer config, ``examples/balancer/haproxy.py``, as a module."""
    spec = importlib.util.spec_from_file_location("haproxy_example", BALANCER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class RedisServer:
    """A redis-server on a loopback port, nothing saved to disk: a restart brings it back empty."""

    program: str
    port: int
    process: Process | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        """Start it and return once it says it accepts connections."""
        command = [self.program, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = await anyio.open_process(command, stdin=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        assert self.process.stdout is not None
        seen = b""
        async for chunk in self.process.stdout:
            seen += chunk
            if b"Ready to accept connections" in seen:
                return
        raise RuntimeError(f"redis-server exited before accepting connections: {seen.decode(errors='replace')}")

    async def stop(self) -> None:
        if self.process is not None:
            await stop_process(self.process)
            self.process = None

    async def restart(self) -> None:
        """Stop it and start it again on the same port, holding no data (as a Redis without persistence)."""
        await self.stop()
        await self.start()


@asynccontextmanager
async def restartable_redis() -> AsyncIterator[RedisServer]:
    """A :class:`RedisServer` on a free port, stopped on the way out.

    Skips the test when Debian's ``redis-server`` is not installed.
    """
    program = shutil.which("redis-server")
    if program is None:
        pytest.skip("redis-server is not installed (Debian package redis-server)")
    server = RedisServer(program, _free_port())
    try:
        await server.start()
        yield server
    finally:
        await server.stop()


@asynccontextmanager
async def redis_server() -> AsyncIterator[str]:
    """A redis-server on a free loopback port, nothing saved to disk; yields its URL.

    Skips the test when Debian's ``redis-server`` is not installed.
    """
    async with restartable_redis() as server:
        yield server.url


async def _wait_for_port(port: int, process: Process, name: str) -> None:
    """Return once something accepts connections on loopback ``port`` (polled: no other event to wait on)."""

    async def accepts() -> bool:
        if process.returncode is not None:
            raise RuntimeError(f"{name} exited with code {process.returncode} before listening")
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            return False
        await stream.aclose()
        return True

    await poll_until(accepts)


@dataclass
class Balancer:
    """HAProxy with the example's config in front of replicas (its servers, by index), steered at run time.

    Steering goes through HAProxy's runtime API, which applies each command
    before answering: no reload, and streams already open stay open.
    """

    url: str
    admin: Path
    count: int

    async def command(self, line: str) -> str:
        """Send one runtime API command; its answer."""
        async with await anyio.connect_unix(self.admin) as stream:
            await stream.send(line.encode() + b"\n")
            chunks = []
            with contextlib.suppress(anyio.EndOfStream):
                while True:
                    chunks.append(await stream.receive())
        return b"".join(chunks).decode()

    async def _servers(self) -> dict[str, dict[str, str]]:
        """``show stat`` of the replicas' servers, by name."""
        lines = (await self.command("show stat")).removeprefix("# ").splitlines()
        header = lines[0].split(",")
        rows = [dict(zip(header, line.split(","), strict=False)) for line in lines[1:] if line]
        return {row["svname"]: row for row in rows if row["pxname"] == "replicas"}

    async def routed(self) -> list[int]:
        """How many requests each replica was given (health checks aside)."""
        servers = await self._servers()
        return [int(servers[f"r{index}"]["lbtot"]) for index in range(self.count)]

    async def exclude(self, index: int) -> None:
        """Give replica ``index`` no new requests (weight 0); what it serves goes on."""
        await self.command(f"set weight replicas/r{index} 0")

    async def include(self, index: int) -> None:
        await self.command(f"set weight replicas/r{index} 1")

    async def only(self, index: int) -> None:
        """Send every new request to replica ``index``."""
        for other in range(self.count):
            await (self.include if other == index else self.exclude)(other)

    async def cut(self, index: int) -> None:
        """Break every stream open with replica ``index`` (client side too), as a network failure would."""
        await self.command(f"shutdown sessions server replicas/r{index}")

    async def move(self, index: int, address: tuple[str, int]) -> None:
        """Point replica ``index`` at ``address`` (a replica restarted elsewhere); return once its check passes."""
        host, port = address
        await self.command(f"set server replicas/r{index} addr {host} port {port}")

        async def up() -> bool:
            return (await self._servers())[f"r{index}"]["status"].startswith("UP")

        await poll_until(up)


@asynccontextmanager
async def haproxy(addresses: Sequence[tuple[str, int]], folder: Path) -> AsyncIterator[Balancer]:
    """HAProxy on a free loopback port in front of ``addresses``, its files in ``folder``.

    Skips the test when Debian's ``haproxy`` is not installed.
    """
    program = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")  # Debian's root-only PATH
    if program is None:
        pytest.skip("haproxy is not installed (Debian package haproxy)")
    folder.mkdir(parents=True, exist_ok=True)
    port, admin, config = _free_port(), folder / "haproxy.sock", folder / "haproxy.cfg"
    upstreams = [f"{host}:{number}" for host, number in addresses]
    config.write_text(haproxy_example().haproxy_config(upstreams, port=port, admin_socket=admin), encoding="utf-8")
    with (folder / "haproxy.log").open("ab") as log:
        process = await anyio.open_process(
            [program, "-f", str(config), "-db"], stdin=subprocess.DEVNULL, stdout=log, stderr=log
        )
    try:
        try:
            await _wait_for_port(port, process, "haproxy")
        except RuntimeError as exc:
            log_text = (folder / "haproxy.log").read_text(encoding="utf-8", errors="replace")[-3000:]
            raise type(exc)(f"haproxy ({config}): {exc}; its output:\n{log_text}") from None
        yield Balancer(f"http://127.0.0.1:{port}/mcp", admin, len(addresses))
    finally:
        await stop_process(process)


@dataclass
class Replica:
    """One ``toolsift serve`` process."""

    name: str
    process: Process
    url: str

    @property
    def address(self) -> tuple[str, int]:
        authority = self.url.split("//", 1)[1].split("/", 1)[0]
        host, _, port = authority.rpartition(":")
        return host, int(port)


@dataclass
class Cluster:
    """Replicas of one config behind HAProxy (``balancer``, at ``url``), and their Redis."""

    config: Path
    redis: str
    replicas: list[Replica] = field(default_factory=list)
    front: Balancer | None = None
    stack: AsyncExitStack = field(default_factory=AsyncExitStack)

    @property
    def balancer(self) -> Balancer:
        assert self.front is not None, "the balancer starts after the replicas"
        return self.front

    @property
    def url(self) -> str:
        return self.balancer.url

    async def start(self, name: str) -> Replica:
        """Start replica ``name`` and wait until it serves."""
        folder = self.config.parent
        ready = folder / f"{name}.ready"
        ready.unlink(missing_ok=True)
        command = [
            sys.executable,
            "-m",
            "toolsift.serve",
            "--config",
            str(self.config),
            "--transport",
            "http",
            "--port",
            "0",
            "--gateway",
            "--redis",
            self.redis,
            "--replica",
            name,
            "--ready-file",
            str(ready),
        ]
        with (folder / f"{name}.log").open("ab") as log:
            process = await anyio.open_process(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        self.stack.push_async_callback(stop_process, process)
        try:
            url = (await wait_for_file(ready, process=process)).strip()
        except RuntimeError as exc:
            log_text = (folder / f"{name}.log").read_text(encoding="utf-8", errors="replace")[-3000:]
            raise type(exc)(f"replica {name}: {exc}; stderr:\n{log_text}") from None
        replica = Replica(name, process, url)
        self.replicas.append(replica)
        return replica

    def index(self, name: str) -> int:
        return [replica.name for replica in self.replicas].index(name)


@asynccontextmanager
async def cluster(config: Path, redis: str, count: int = 3) -> AsyncIterator[Cluster]:
    """``count`` replicas (``r0``, ``r1``...) of ``config`` sharing ``redis``, behind HAProxy."""
    shared = Cluster(config, redis)
    async with shared.stack:
        for index in range(count):
            await shared.start(f"r{index}")
        shared.front = await shared.stack.enter_async_context(
            haproxy([replica.address for replica in shared.replicas], config.parent / "balancer")
        )
        yield shared


@asynccontextmanager
async def redis_client(redis_url: str) -> AsyncIterator[Any]:
    """A redis-py client of ``redis_url`` (answers decoded), closed on the way out."""
    from redis.asyncio import Redis

    client = Redis.from_url(redis_url, decode_responses=True)
    try:
        yield client
    finally:
        await client.aclose()


async def audit_records(redis_url: str, prefix: str = "toolsift") -> list[dict[str, Any]]:
    """The shared audit stream: each entry's record, with the replica that wrote it."""
    async with redis_client(redis_url) as client:
        entries = await client.xrange(f"{prefix}:audit")
    return [{**json.loads(fields["record"]), "replica": fields["replica"]} for _, fields in entries]


async def audited(redis_url: str, count: int) -> list[dict[str, Any]]:
    """The shared audit stream once it holds ``count`` records (a call's end is written after its answer)."""

    async def enough() -> list[dict[str, Any]] | None:
        records = await audit_records(redis_url)
        return records if len(records) >= count else None

    return await poll_until(enough)


async def redis_keys(redis_url: str, pattern: str) -> list[str]:
    """The keys matching ``pattern``."""
    async with redis_client(redis_url) as client:
        return sorted(await client.keys(pattern))


async def call_runner(redis_url: str, prefix: str = "toolsift") -> str:
    """The name of the replica that stored the latest event of a request stream (the one running the latest call).

    The tests that ask have one session, hence one event stream.
    """
    async with redis_client(redis_url) as client:
        (key,) = await client.keys(f"{prefix}:events:*")
        entries = await client.xrevrange(key, count=50)
    return next(fields["r"].partition("#")[0] for _, fields in entries if fields["s"] != "_GET_stream")


def release_with(path: Path, text: str) -> None:
    """Create ``path`` holding ``text`` at once (by rename): a tool waiting for it never reads it half written."""
    pending = path.with_name(path.name + ".tmp")
    pending.write_text(text, encoding="utf-8")
    pending.replace(path)


async def waiting_call(
    client: Any,
    tool: str,
    release: Path,
    results: list[str],
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Call ``tool`` (which waits for ``release``), report once it runs (its first progress), keep its text."""
    running = anyio.Event()

    async def progress(done: float, total: float | None, message: str | None) -> None:
        running.set()

    async def call() -> None:
        result = await client.call_tool(tool, {"path": str(release)}, progress_callback=progress)
        results.append("\n".join(block.text for block in result.content if hasattr(block, "text")))

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        await running.wait()
        task_status.started()


async def holding_call(
    client: Any,
    release: Path,
    failures: list[str],
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Call ``blocking__hold`` (which waits for ``release``), report once it runs, keep the error it ends with."""
    from mcp import MCPError

    async def hold() -> None:
        try:
            await client.call_tool("blocking__hold", {"path": str(release)})
        except MCPError as exc:
            failures.append(str(exc))

    async with anyio.create_task_group() as group:
        group.start_soon(hold)
        await wait_for_file(Path(f"{release}.running"))
        task_status.started()
