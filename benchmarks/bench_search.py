"""Tool search: ranking accuracy, index build time and query latency, context bytes per turn.

Run: python benchmarks/bench_search.py

- Ranking: the fixed corpus and queries of ``tests/test_search_ranking.py``
  (the flow server's 214 tools plus the example skills, 40 queries): top-1 and
  top-3 accuracy.
- Scale: the flow server's tools under 47 server names (10,058 tools with real
  descriptions and schemas). Build time of a fresh index (stemmer cache
  cleared), rebuild time after one server swapped its tools, median latency of
  ``SearchIndex.search`` and of a whole ``search_tools`` call through
  ``registry.execute``. Targets: build <= 1 s, query median <= 5 ms.
- Context: bytes of the OpenAI tool declarations sent per turn when every tool
  is registered as global, against search mode (builtin tools, ``search_tools``
  and the resource tools; the 10,058 tools internal) at the start of a turn and
  after one search unlocked its matches.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _report import median_us, save

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "examples" / "servers")]

import anyio  # noqa: E402
from _flow import CATALOG  # noqa: E402
from test_search_ranking import QUERIES, CatalogTool  # noqa: E402

from toolsift.mcp_sessions import ListMcpResources, ReadMcpResource, ServerConfig  # noqa: E402
from toolsift.mcp_sessions._wrapper import tool_spec  # noqa: E402
from toolsift.registry import FunctionTool, ToolRegistry, TurnScope  # noqa: E402
from toolsift.search import Discovery, SearchIndex, SearchToolsTool  # noqa: E402
from toolsift.search._tokens import _stem  # noqa: E402
from toolsift.skills import SkillsLoader  # noqa: E402

SERVERS = 47
FORMAT = "openai"


def read_file(path: str) -> str:
    """Read a UTF-8 text file of the workspace."""
    return path


def write_file(path: str, text: str) -> str:
    """Write a UTF-8 text file in the workspace, replacing it if it exists."""
    return path


def list_directory(path: str = ".") -> list[str]:
    """List the entries of a folder of the workspace."""
    return [path]


def builtins() -> list[Any]:
    return [FunctionTool(read_file, read_only=True), FunctionTool(write_file), FunctionTool(list_directory,
                                                                                             read_only=True)]


def flow_tools(server: str) -> list[CatalogTool]:
    config = ServerConfig(command="flow").with_name(server)
    return [CatalogTool(tool_spec(config, entry.tool)) for entry in CATALOG]


def large_registry(*, internal: bool) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_many(builtins())
    registry.register_many([ListMcpResources({}), ReadMcpResource({})])
    for number in range(SERVERS):
        server = f"srv{number:02d}"
        registry.replace_server(server, flow_tools(server), internal=internal)
    return registry


def schema_bytes(registry: ToolRegistry, scope: TurnScope) -> int:
    return len(json.dumps(registry.schemas_for_tools(scope, FORMAT)).encode())


def ranking() -> dict[str, Any]:
    registry = ToolRegistry()
    registry.replace_server("claude-flow", flow_tools("claude-flow"), internal=True)
    index = SearchIndex(registry, SkillsLoader(project=ROOT / "examples" / "skills").load())
    ranks = []
    for query, intended in QUERIES:
        names = [hit.document.name for hit in index.search(query, limit=3)]
        ranks.append(names.index(intended) + 1 if intended in names else None)
    return {
        "ranking_queries": len(QUERIES),
        "ranking_documents": len(index.documents),
        "ranking_top1": sum(r == 1 for r in ranks) / len(ranks),
        "ranking_top3": sum(r is not None for r in ranks) / len(ranks),
    }


def scale() -> dict[str, Any]:
    registry = large_registry(internal=True)
    builds = []
    for _ in range(5):
        _stem.cache_clear()
        index = SearchIndex(registry)
        start = time.perf_counter()
        index.refresh()
        builds.append(time.perf_counter() - start)
    swaps = []
    for round_ in range(5):
        server = f"srv{round_:02d}"
        registry.replace_server(server, flow_tools(server), internal=True)  # new tool objects: re-tokenised
        start = time.perf_counter()
        index.refresh()
        swaps.append(time.perf_counter() - start)
    queries = [query for query, _ in QUERIES]
    cycle = iter(queries * 50)
    search_us = median_us(lambda: index.search(next(cycle), limit=8), repeat=len(queries) * 10)

    registry.register(SearchToolsTool(index))
    discovery = Discovery(registry)
    scope = discovery.scope_for_turn(TurnScope())
    tool_cycle = iter(queries * 50)

    async def one_call() -> None:
        with discovery.bound():
            await registry.execute("search_tools", {"query": next(tool_cycle)}, scope)
        discovery.reset()

    async def timed() -> list[float]:
        samples = []
        for _ in range(len(queries) * 5):
            start = time.perf_counter()
            await one_call()
            samples.append((time.perf_counter() - start) * 1e6)
        return samples

    tool_us = statistics.median(anyio.run(timed))
    return {
        "tools": len(registry) - 1,
        "documents": len(index.documents),
        "build_fresh_median_s": statistics.median(builds),
        "build_fresh_max_s": max(builds),
        "rebuild_after_server_swap_median_s": statistics.median(swaps),
        "search_median_ms": search_us / 1000,
        "search_tools_call_median_ms": tool_us / 1000,
        "target_build_s": 1.0,
        "target_query_median_ms": 5.0,
    }


def context() -> dict[str, Any]:
    everything = large_registry(internal=False)
    all_bytes = schema_bytes(everything, TurnScope())

    registry = large_registry(internal=True)
    index = SearchIndex(registry)
    registry.register(SearchToolsTool(index))
    discovery = Discovery(registry)
    start_scope = discovery.scope_for_turn(TurnScope())
    start_bytes = schema_bytes(registry, start_scope)

    async def search_once() -> int:
        with discovery.bound():
            result = await registry.execute("search_tools", {"query": "store a value in memory"}, start_scope)
        return len(result.text_content().encode())

    result_bytes = anyio.run(search_once)
    after_scope = discovery.scope_for_turn(TurnScope())
    return {
        "context_all_tools_registered_bytes": all_bytes,
        "context_all_tools_count": len(everything.visible_tools(TurnScope())),
        "context_search_mode_turn_start_bytes": start_bytes,
        "context_search_mode_turn_start_tools": len(registry.visible_tools(start_scope)),
        "context_search_result_bytes": result_bytes,
        "context_search_mode_after_one_search_bytes": schema_bytes(registry, after_scope),
        "context_search_mode_after_one_search_tools": len(registry.visible_tools(after_scope)),
        "context_reduction_turn_start": all_bytes / start_bytes,
    }


def main() -> None:
    figures = {**ranking(), **scale(), **context()}
    save("search", figures)


if __name__ == "__main__":
    main()
