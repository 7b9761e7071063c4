"""The event loop at 10,000 tools: the longest stall per step of a realistic sequence.

Run: cd benchmarks && python bench_stall.py [--settle-heap]

A ticker task sleeps 1 ms at a time and records how late it wakes. The
sequence, each step awaited as an application would: start (50 servers of 200
tools registered one server at a time, as their sessions come up), skill
switches (10 new scopes, literal, mixed and wildcard, each listed in four
formats: the first export of their schemas), a list_changed (one server's tools
replaced, then every scope listed again), a config reload (a file of 50
servers, lazy so none starts, rewritten with one server changed and one added:
read, validated, diffed and applied by ``McpServerManager.reload``), and 500
audited calls written to a JSON-lines audit file (the loop runs between calls,
as between turns). Beside
each step: its longest garbage collection pause (``gc.callbacks``), and the
ticker alone (no work), the anchor for this machine's own scheduling noise in
the same run.

``--settle-heap`` builds the registry with ``ToolRegistry(settle_heap=True)``
(what ``toolsift serve`` does; the library's default is off) and saves its
figures as ``stall_settle_heap``: run it both ways to see what freezing the
heap buys. Each run is its own process, as the freeze is process-wide.

Target: no step stalls the loop over 20 ms. Search index builds are measured
by ``bench_search.py``.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from _report import save
from bench_registry import SKILLS, TOOLS_PER_SERVER, BenchTool, tool_names

from toolsift.config import load_config
from toolsift.mcp_sessions.reload import McpServerManager
from toolsift.registry import AuditLog, ToolRegistry, TurnScope

TOOLS = 10_000
CONFIG_SERVERS = 50
TICK_S = 0.001
FORMATS = ("mcp", "openai", "anthropic", "gemini")


class Ticker:
    """Wakes every TICK_S and keeps the worst lateness since the last reset."""

    def __init__(self) -> None:
        self.worst_ms = 0.0
        self.worst_gc_ms = 0.0
        self._gc_started = 0.0
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            self.worst_gc_ms = max(self.worst_gc_ms, (time.perf_counter() - self._gc_started) * 1000)

    async def run(self) -> None:
        while True:
            due = time.perf_counter() + TICK_S
            await anyio.sleep(TICK_S)
            self.worst_ms = max(self.worst_ms, (time.perf_counter() - due) * 1000)

    async def measure(self, step: Callable[[], Awaitable[None]]) -> tuple[float, float]:
        """The step's longest stall and its longest garbage collection pause, in ms."""
        await anyio.sleep(TICK_S * 3)  # let the ticker settle after the last step
        self.worst_ms = self.worst_gc_ms = 0.0
        await step()
        await anyio.sleep(TICK_S * 3)  # the tick that was due during the step's last chunk
        return self.worst_ms, self.worst_gc_ms


def scopes(round_: int) -> list[TurnScope]:
    """Ten scopes never listed before: each skill's patterns plus a distinct literal pattern."""
    return [
        TurnScope(skill_allowed=(*patterns, f"srv{(round_ * 7 + i) % 50:02d}__*"), skill=f"{name}{i}")
        for i in range(4)
        for name, patterns in SKILLS.items()
    ][:10]


def write_config(path: Path, version: int) -> Path:
    """A config of lazy servers (none starts); each version changes one server and adds one."""
    servers = {
        f"lazy{i:02d}": {"command": sys.executable, "args": ["-c", "pass", str(version if i == 0 else 0)], "lazy": True}
        for i in range(CONFIG_SERVERS + version)
    }
    path.write_text(json.dumps({"tools": {"mcpServers": servers}}), encoding="utf-8")
    return path


async def main_async(settle_heap: bool) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp())
    audit_path = folder / "audit.jsonl"
    config_path = write_config(folder / "toolsift.json", 0)
    registry = ToolRegistry(audit=AuditLog(audit_path), settle_heap=settle_heap)
    ticker = Ticker()
    figures: dict[str, float] = {}

    async def idle() -> None:
        await anyio.sleep(0.2)

    async def start() -> None:
        for server in range(TOOLS // TOOLS_PER_SERVER):
            name = f"srv{server:02d}"
            registry.replace_server(name, [BenchTool(n, name) for n in tool_names(server)], internal=server % 10 != 0)
            await anyio.sleep(0)

    def switches(round_: int) -> Callable[[], Awaitable[None]]:
        async def switch() -> None:
            for scope in scopes(round_):
                for fmt in FORMATS:
                    registry.schemas_for_tools(scope, fmt)
                    await anyio.sleep(0)

        return switch

    async def list_changed() -> None:
        registry.replace_server(
            "srv10", [BenchTool(f"srv10__fresh{i}", "srv10") for i in range(TOOLS_PER_SERVER)], internal=False
        )
        await anyio.sleep(0)
        await switches(0)()

    async def reload() -> None:
        write_config(config_path, 1)
        diff = await manager.reload(config_path)
        assert diff is not None and diff.changed and diff.added, "one server changed and one added"

    async def audited_calls() -> None:
        for i in range(500):
            await registry.execute("srv00__memory0_store", {"key": f"k{i}"})
            await anyio.sleep(0)

    async with McpServerManager(registry, load_config(config_path)) as manager, anyio.create_task_group() as group:
        group.start_soon(ticker.run)
        steps = {
            "ticker_alone": idle,
            "start": start,
            "skill_switches_new_scopes": switches(1),
            "list_changed_and_relist": list_changed,
            "config_reload": reload,
            "audited_calls": audited_calls,
            "ticker_alone_after": idle,
        }
        for label, step in steps.items():
            figures[f"{label}_stall_ms"], figures[f"{label}_longest_gc_ms"] = await ticker.measure(step)
        group.cancel_scope.cancel()
    assert sum(1 for _ in audit_path.open()) == 500, "every audited call was written"
    figures["target_ms"] = 20.0
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--settle-heap",
        action="store_true",
        help="freeze the heap after large registrations (ToolRegistry(settle_heap=True))",
    )
    args = parser.parse_args()
    figures = anyio.run(main_async, args.settle_heap)
    save(
        "stall_settle_heap" if args.settle_heap else "stall",
        {"tools": TOOLS, "settle_heap": args.settle_heap, **figures},
    )


if __name__ == "__main__":
    main()
