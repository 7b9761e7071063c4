"""Memory: resident set size per 10,000 registered tools and per idle MCP session.

Run: cd benchmarks && python bench_memory.py

(a) 100,000 tools (servers of 200, one in ten global, the schemas of
    ``bench_registry``) are registered and listed once for a mixed skill in
    ``openai`` format; RSS growth is reported per 10,000 tools, beside the
    anchor of the same tool objects held in a plain list (what the tools
    themselves cost, before the registry indexes and caches them).
(b) 10 stdio sessions to ``examples/servers/general.py`` are opened and left
    idle; this process's RSS growth is reported per session (the servers' own
    processes are not counted: each is a separate Python process).

Budgets: <= 25 MB per 10,000 tools, <= 2 MB per idle session (this process).
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import anyio
from _report import save
from bench_registry import SKILLS, TOOLS_PER_SERVER, BenchTool, build, tool_names

from toolsift.config import StdioServer
from toolsift.mcp_sessions import register_mcp_tools
from toolsift.mcp_sessions._internal import SessionState
from toolsift.registry import ToolRegistry, TurnScope

TOOLS = 100_000
SESSIONS = 10
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "servers"


def rss_mb() -> float:
    """This process's resident set size, from /proc (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def settled_rss() -> float:
    gc.collect()
    return rss_mb()


def tools_mb_per_10k() -> tuple[float, float]:
    """RSS growth per 10k tools: registered and listed, and the bare tool objects as anchor."""
    before = settled_rss()
    anchor = [BenchTool(n, f"srv{s:02d}") for s in range(TOOLS // TOOLS_PER_SERVER) for n in tool_names(s)]
    anchor_mb = settled_rss() - before
    del anchor
    before = settled_rss()
    registry = build(TOOLS)
    registry.schemas_for_tools(TurnScope(skill_allowed=SKILLS["mixed"]), "openai")
    registered_mb = settled_rss() - before
    assert len(registry) == TOOLS
    return registered_mb / (TOOLS / 10_000), anchor_mb / (TOOLS / 10_000)


async def session_mb() -> float:
    servers = [
        StdioServer(
            command=sys.executable,
            args=(str(EXAMPLES / "general.py"),),  # type: ignore[arg-type]
            internal_only=False,
        ).with_name(f"general{i}")
        for i in range(SESSIONS)
    ]
    before = settled_rss()
    async with register_mcp_tools(servers, ToolRegistry()) as sessions:
        assert all(s.state is SessionState.READY for s in sessions.values())
        return (settled_rss() - before) / SESSIONS


def main() -> None:
    per_session = anyio.run(session_mb)
    per_10k, anchor_per_10k = tools_mb_per_10k()
    save(
        "memory",
        {
            "rss_mb_per_10k_tools": per_10k,
            "anchor_tool_objects_mb_per_10k": anchor_per_10k,
            "rss_mb_per_idle_session": per_session,
            "budget_mb_per_10k_tools": 25.0,
            "budget_mb_per_idle_session": 2.0,
        },
    )


if __name__ == "__main__":
    main()
