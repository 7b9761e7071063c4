"""Hot reload: how fast config edits reach the registry, and whether add/remove cycles leak.

Run: python benchmarks/bench_reload.py [--repeat 5] [--cycles 200] [--debounce-ms 300]

1. Latency through the file watcher (``McpServerManager.watch`` with the given
   debounce): the time from writing ``toolsift.json`` (a rename over the old
   file, as editors save) to the ``tools.changed`` event that shows the added
   server's tools in the registry, and from the write that removes it to the
   event that shows them gone. Medians and maxima over ``--repeat`` edits. For
   scale, the time ``apply()`` alone takes to start the same server and
   register its tools (no file, no watcher) is given too: that part is the
   server process starting up.
2. Leaks: ``--cycles`` add/remove cycles of one stdio server through
   ``apply()`` (each removal waits until the old session has closed), run
   first so that nothing else has touched the process. Resident memory, open
   file descriptors, threads and child processes of this process are sampled
   after the first cycles, halfway and at the end.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from _report import save

from toolsift.config import StdioServer, load_config
from toolsift.mcp_sessions._internal import ManagerEvent
from toolsift.mcp_sessions.reload import McpServerManager
from toolsift.registry import ToolRegistry

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "servers"
SERVER = {"command": sys.executable, "args": [str(EXAMPLES / "general.py")], "internalOnly": False}


def write(path: Path, servers: dict[str, Any]) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps({"tools": {"mcpServers": servers}}), encoding="utf-8")
    os.replace(temporary, path)


class Clock:
    """Records when each awaited event arrives."""

    def __init__(self, manager: McpServerManager) -> None:
        self._wanted: tuple[str, str, bool] | None = None
        self._done = anyio.Event()
        self.at = 0.0
        manager.subscribe(self._on_event)

    def expect(self, kind: str, server: str, *, tools: bool = False) -> None:
        self._wanted, self._done = (kind, server, tools), anyio.Event()

    def _on_event(self, event: ManagerEvent) -> None:
        if self._wanted == (event.kind, event.server, bool(event.tools)):
            self.at = time.perf_counter()
            self._done.set()

    async def wait(self) -> float:
        with anyio.fail_after(60):
            await self._done.wait()
        return self.at


async def latency(repeat: int, debounce_ms: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="toolsift-bench-") as tmp:
        path = Path(tmp) / "toolsift.json"
        write(path, {})
        async with McpServerManager(ToolRegistry(), load_config(path)) as manager, anyio.create_task_group() as watcher:
            clock = Clock(manager)
            await watcher.start(partial(manager.watch, path, debounce_ms=debounce_ms))
            added, removed, started = [], [], []
            for index in range(repeat):
                name = f"s{index}"
                clock.expect("tools.changed", name, tools=True)
                begin = time.perf_counter()
                write(path, {name: SERVER})
                added.append(await clock.wait() - begin)
                clock.expect("tools.changed", name, tools=False)
                begin = time.perf_counter()
                write(path, {})
                removed.append(await clock.wait() - begin)
                clock.expect("server.removed", name)
                await clock.wait()
                begin = time.perf_counter()
                await manager.apply({"direct": StdioServer.model_validate(SERVER).with_name("direct")})
                started.append(time.perf_counter() - begin)
                clock.expect("server.removed", "direct")
                await manager.apply({})
                await clock.wait()
            watcher.cancel_scope.cancel()
    return {
        "add_write_to_tools_visible_median_s": statistics.median(added),
        "add_write_to_tools_visible_max_s": max(added),
        "remove_write_to_tools_gone_median_s": statistics.median(removed),
        "remove_write_to_tools_gone_max_s": max(removed),
        "apply_only_server_start_median_s": statistics.median(started),
    }


def resources() -> dict[str, int]:
    gc.collect()
    rss_kb = next(
        int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("VmRSS:")
    )
    children = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children += int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid()
    return {
        "rss_kb": rss_kb,
        "fds": len(os.listdir("/proc/self/fd")),
        "threads": threading.active_count(),
        "children": children,
    }


async def cycles(count: int) -> dict[str, Any]:
    config = StdioServer.model_validate(SERVER).with_name("cycled")
    samples: dict[str, dict[str, int]] = {}
    checkpoints = {n for n in (1, 10, 25, 50, 100, 150) if n <= count} | {count}
    begin = time.perf_counter()
    async with McpServerManager(ToolRegistry()) as manager:
        clock = Clock(manager)
        for cycle in range(1, count + 1):
            await manager.apply({"cycled": config})
            clock.expect("server.removed", "cycled")
            await manager.apply({})
            await clock.wait()
            if cycle in checkpoints:
                samples[str(cycle)] = resources()
                print(f"  after {cycle} cycles: {samples[str(cycle)]}", flush=True)
    elapsed = time.perf_counter() - begin
    first, last = samples[min(samples, key=int)], samples[str(count)]
    after_ten = samples.get("10", first)
    halfway = samples[str(max(n for n in map(int, samples) if n <= max(count // 2, 1)))]
    return {
        "cycles": count,
        "cycle_median_s": round(elapsed / count, 3),
        "rss_kb_after_1": first["rss_kb"],
        "rss_kb_after_10": after_ten["rss_kb"],
        f"rss_kb_after_{count}": last["rss_kb"],
        "rss_growth_kb_10_to_end": last["rss_kb"] - after_ten["rss_kb"],
        "rss_growth_kb_last_half": last["rss_kb"] - halfway["rss_kb"],
        "fds_after_1": first["fds"],
        f"fds_after_{count}": last["fds"],
        f"threads_after_{count}": last["threads"],
        f"children_after_{count}": last["children"],
        "samples": json.dumps(samples),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--debounce-ms", type=int, default=300)
    args = parser.parse_args()
    # Cycles first, in a process that has done nothing else, so their memory figures are their own.
    print(f"{args.cycles} add/remove cycles of a stdio server", flush=True)
    figures: dict[str, Any] = await cycles(args.cycles)
    print(f"reload latency through the watcher ({args.repeat} edits, debounce {args.debounce_ms} ms)", flush=True)
    figures.update({key: round(value, 3) for key, value in (await latency(args.repeat, args.debounce_ms)).items()})
    figures["cpus"] = os.cpu_count() or 0
    save("reload", figures)


if __name__ == "__main__":
    anyio.run(main)
