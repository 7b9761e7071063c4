"""Tool search: ranking quality, 10,000 tools, event-loop stalls, and what reaches the context.

Run: python benchmarks/bench_search.py            (semantic backends too when toolsift[semantic] is installed)
     python benchmarks/bench_search.py --public etom tune --backend bm25   (only part 0: one source, split, backend)
     python benchmarks/bench_search.py --ranking       (only part 1, the project's own query sets)
     python benchmarks/bench_search.py --scale         (only parts 2-4, not saved)
     python benchmarks/bench_search.py --embed         (only part 5, not saved)

0. Ranking on catalogues this project never tuned on (``_public_run``): BFCL's
   functions pooled into four catalogues (``_public_bfcl``, read from the
   installed ``bfcl-eval`` package), ETOM's 491 MCP servers with its
   multi-server queries (``_public_etom``) and LiveMCPBench's 70 servers with 95
   real tasks (``_public_livemcp``, held out entirely), each read from a checkout
   given by ``--etom``/``--livemcpbench`` and skipped, saying how to get it, when
   absent: hit@1/5/10, recall@10 and MRR per catalogue, split and kind of query
   for each backend, beside plain ``bm25s`` in the same run, with paired
   bootstrap intervals; ``--against`` an earlier run's result file compares each
   ranking with itself there.
1. Ranking on the evaluation set (``_search_eval``: the recorded claude-flow,
   general and everything tools; 85 queries in a tuning and a held-out half,
   44 fresh ones written later over claude-flow tools no earlier query names, and
   66 blind ones over more of them and the git and time servers, and 44 final
   ones written after the last ranking change):
   recall@1, recall@3 and MRR for each backend, beside the anchor, plain
   ``bm25s`` over name + description without stemming, computed in the same
   run. Again with the ``flow`` example, which imitates claude-flow under other
   names, among the tools. Then the older fixed set of
   ``tests/search/test_search_ranking.py`` (flow's 214 tools and the example skills).
2. Scale: claude-flow's 353 tools on 29 servers (10,237 tools, "30 similar
   servers"): fresh build with every cache cleared, rebuild after one
   server's ``tools/list_changed``, query median, distinct tools among the top 5
   and recall@5 of the claude-flow queries; anchor: the same ranking with the
   grouping of identical tools undone. A fresh build of 10,237 tools whose
   descriptions all differ, for the worst case; with the semantic packages, the
   same tools in a hybrid index (358 texts embedded: identical tools are ranked
   once), built again by a new backend over the same cache folder (a restart),
   and a hybrid query's median time at 10,237 tools.
3. The event loop: the longest gap seen by a task ticking every millisecond
   while (a) the first search after start-up waits for the build, (b) a search
   follows a server's ``tools/list_changed``, (c) 100 searches run, all through
   ``search_tools`` (the build in a worker thread); anchor: the same with the
   index refreshed on the loop (``SearchIndex.search``), as every search did
   before, and the ticker alone (the machine's noise). Measured first, in a
   process holding little more than the 10,000 tools: a gen-2 garbage
   collection, which a build's allocations can start, holds the GIL for a time
   that grows with the whole heap.
4. Context: tool-declaration bytes per turn with every tool global, in search
   mode at the start of a turn, after one search, and after 33 searches in a
   conversation-long unlock with the default caps; anchor: 33 searches that
   unlock every hit (8 each) with no cap, as before.
5. Embedding cost (``--embed``): a cold semantic index (empty disk cache) of
   10,237 tools that all differ (claude-flow's 353 on 29 servers, each copy's
   first sentence and input schema its own, so nothing is shared or grouped):
   wall and CPU seconds with the encoder ``load_local_embedder`` picks (the
   int8 onnxruntime one when installed), word pieces per text, the time to
   build its graph once, the same index after a restart (from disk), and bm25
   and hybrid query medians at 10,237 ranked tools. Anchors from the same run:
   the numpy float32 encoder on a sample of 1,000 of the same texts,
   extrapolated, and the cosine of its vectors to the chosen encoder's; the
   BM25 build of the same tools; the text form embedded before (name, title,
   whole description, parameters, up to 256 word pieces) on a sample of 300 of
   them, extrapolated.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import _public_eval
import _weak_eval
from _public_run import SOURCES, add_public_options, public_request, run
from _report import median_us, save
from _search_eval import (
    BACKENDS,
    Metrics,
    Ranking,
    backends,
    eval_registry,
    evaluate,
    load_catalog,
    load_queries,
    plain_bm25s,
    server_tools,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "search"), str(ROOT / "examples" / "servers")]

import anyio  # noqa: E402
import mcp.types as types  # noqa: E402
import numpy as np  # noqa: E402
from test_search_ranking import QUERIES, corpus_registry  # noqa: E402

from toolsift._names import split_name  # noqa: E402
from toolsift.mcp_sessions._internal import ListMcpResources, ReadMcpResource  # noqa: E402
from toolsift.registry import ToolRegistry, TurnScope  # noqa: E402
from toolsift.registry._internal import FunctionTool  # noqa: E402
from toolsift.search import (  # noqa: E402
    Discovery,
    SearchHit,
    SearchIndex,
    SearchToolsTool,
    _documents,
    _query,
    _tokens,
    semantic_available,
)
from toolsift.search._bm25 import Bm25Backend, Ranker  # noqa: E402
from toolsift.search._hybrid import bm25_and  # noqa: E402
from toolsift.search._semantic import SERVER_SHARE, SemanticBackend, load_local_embedder  # noqa: E402
from toolsift.skills import SkillsLoader  # noqa: E402

SERVERS = 29
FORMAT = "openai"
TICK = 0.001
PINNED = TurnScope(pinned=frozenset({"search_tools"}))


def clear_caches() -> None:
    """Forget every memoised tokenisation, so that a build is measured fresh."""
    for module in (_tokens, _documents, _query):
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


def weak(split: str, etom: str | None) -> None:
    """Weak hits: the right first hits each backend keeps, and the needs no tool meets it flags."""
    own = ("tuning",) if split == "tune" else ("heldout", "fresh", "blind", "final")
    folder = _public_eval.folder_from("TOOLSIFT_ETOM")(etom)
    for name, make in backends().items():
        print(f"  {name:9} {split}: {_weak_eval.measure(make, split, own, folder).row()}", flush=True)


# -- 1. ranking --------------------------------------------------------------------------------------------


def hit_names(hits: list[SearchHit]) -> Ranking:
    return [frozenset(doc.name for doc in hit.members) for hit in hits]


def ranking(only: tuple[str, ...] = BACKENDS) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    made = backends(only)
    for corpus, imitation in (("main", False), ("with_flow", True)):
        registry = eval_registry(imitation=imitation)
        names = [tool.spec.name for tool in registry]
        figures[f"eval_{corpus}_tools"] = len(names)
        rankers: dict[str, Callable[[str], Ranking]] = {"plain_bm25s": plain_bm25s(registry)}
        for backend, make in made.items():
            index = SearchIndex(registry, backend=make())
            index.refresh()
            rankers[backend] = lambda q, index=index: hit_names(index.search(q, limit=10))  # type: ignore[misc]
        for half in ("tuning", "heldout", "fresh", "blind", "final", None):
            queries = load_queries(half)
            for name, rank in rankers.items():
                metrics: Metrics = evaluate(rank, queries, names)
                key = f"eval_{corpus}_{half or 'all'}_{name}"
                figures[f"{key}_recall1"] = metrics.recall1
                figures[f"{key}_recall3"] = metrics.recall3
                figures[f"{key}_mrr"] = metrics.mrr
            figures[f"eval_{half or 'all'}_queries"] = len(queries)
    index = SearchIndex(corpus_registry(), SkillsLoader(project=ROOT / "examples" / "skills").load())
    ranks = []
    for query, intended in QUERIES:
        found = [hit.document.name for hit in index.search(query, limit=3)]
        ranks.append(found.index(intended) + 1 if intended in found else None)
    figures["fixed_set_queries"] = len(QUERIES)
    figures["fixed_set_top1"] = sum(r == 1 for r in ranks) / len(ranks)
    figures["fixed_set_top3"] = sum(r is not None for r in ranks) / len(ranks)
    return figures


# -- 2. scale ----------------------------------------------------------------------------------------------


def read_file(path: str) -> str:
    """Read a UTF-8 text file of the workspace."""
    return path


def write_file(path: str, text: str) -> str:
    """Write a UTF-8 text file in the workspace, replacing it if it exists."""
    return path


def list_directory(path: str = ".") -> list[str]:
    """List the entries of a folder of the workspace."""
    return [path]


def flow_servers(*, distinct: bool = False, internal: bool = True) -> ToolRegistry:
    """Builtins, the resource tools, and claude-flow's tools on ``SERVERS`` servers."""
    tools = load_catalog()["claude-flow"]
    registry = ToolRegistry()
    registry.register_many(
        [
            FunctionTool(read_file, read_only=True),
            FunctionTool(write_file),
            FunctionTool(list_directory, read_only=True),
        ]
    )
    registry.register_many([ListMcpResources({}), ReadMcpResource({})])
    for number in range(SERVERS):
        server = f"cf{number:02d}"
        listed = [variant(tool, number) for tool in tools] if distinct else tools
        registry.replace_server(server, server_tools(server, listed), internal=internal)
    return registry


def variant(tool: types.Tool, number: int) -> types.Tool:
    """The tool with a description no other server has (for the worst-case build)."""
    return tool.model_copy(update={"description": f"Edition {number} ({number * 7919 % 1000}). {tool.description}"})


def fresh_build(registry: ToolRegistry) -> float:
    clear_caches()
    index = SearchIndex(registry)
    started = time.perf_counter()
    index.refresh()
    return time.perf_counter() - started


def top5(index: SearchIndex, ungrouped: Ranker, query: str) -> tuple[list[set[str]], list[str]]:
    """Tools (by name on their server) in the top 5: grouped, and ranked one document per server's tool."""
    hits = index.search(query, limit=5)
    grouped = [{split_name(doc.name)[1] for doc in hit.members} for hit in hits]
    scores = ungrouped.scores(query)
    documents = index.documents
    flat = [documents[int(i)].name for i in np.argsort(-scores, kind="stable")[:5] if scores[i] > 0]
    return grouped, flat


def semantic_scale(registry: ToolRegistry, queries: Iterator[str]) -> dict[str, Any]:
    """A hybrid index over ``registry`` built with its embeddings, again after a restart (from disk), a query's time.

    Only one document per group of identical tools is ranked, so embedded: the
    10,237 tools of 29 claude-flow copies are 358 texts, whatever their descriptions.
    """
    if not semantic_available():
        print("  semantic at scale: not measured (the semantic packages are not installed)")
        return {}
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        backend = SemanticBackend(load_local_embedder(), cache_folder=Path(folder), server_share=SERVER_SHARE)
        index = SearchIndex(registry, backend=bm25_and(backend))
        index.refresh()
        embed_s = time.perf_counter() - started
        restarted = SemanticBackend(load_local_embedder(), cache_folder=Path(folder), server_share=SERVER_SHARE)
        started = time.perf_counter()
        SearchIndex(registry, backend=restarted).refresh()
        restart_s = time.perf_counter() - started
        hybrid_us = median_us(lambda: index.search(next(queries), limit=8), repeat=200)
    return {
        "semantic_embedded_texts": backend.embedded,
        "semantic_build_s": embed_s,
        "semantic_build_after_restart_s": restart_s,
        "semantic_embedded_after_restart": restarted.embedded,
        "hybrid_search_median_ms": hybrid_us / 1000,
        "target_semantic_build_s": 60,
        "target_hybrid_search_ms": 20,
    }


def scale() -> dict[str, Any]:
    registry = flow_servers()
    builds = [fresh_build(registry) for _ in range(5)]
    distinct = flow_servers(distinct=True)
    distinct_builds = [fresh_build(distinct) for _ in range(3)]
    index = SearchIndex(registry)
    index.refresh()
    swaps = []
    tools = load_catalog()["claude-flow"]
    for round_ in range(5):
        server = f"cf{round_:02d}"
        registry.replace_server(server, server_tools(server, tools), internal=True)  # new tool objects
        started = time.perf_counter()
        index.refresh()
        swaps.append(time.perf_counter() - started)
    queries = [q for q in load_queries() if all(name.startswith("claude-flow__") for name in q.expected)]
    cycle = iter([q.text for q in queries] * 50)
    search_us = median_us(lambda: index.search(next(cycle), limit=8), repeat=len(queries) * 5)
    grouped_distinct, flat_distinct, found, flat_found = [], [], 0, 0
    # The anchor: the same BM25 over every document, identical tools of different servers ranked apart.
    ungrouped = Bm25Backend().build(index.documents)
    for query in queries:
        wanted = {split_name(name)[1] for name in query.expected}
        grouped, flat = top5(index, ungrouped, query.text)
        grouped_distinct.append(len(grouped))
        flat_names = {split_name(name)[1] for name in flat}
        flat_distinct.append(len(flat_names))
        found += any(names & wanted for names in grouped)
        flat_found += bool(flat_names & wanted)
    return {
        **semantic_scale(distinct, cycle),
        "scale_tools": len(registry),
        "scale_groups_ranked": len({doc.identity for doc in index.documents}),
        "build_fresh_median_s": statistics.median(builds),
        "build_fresh_max_s": max(builds),
        "build_fresh_distinct_descriptions_median_s": statistics.median(distinct_builds),
        "rebuild_after_server_swap_median_s": statistics.median(swaps),
        "search_median_ms": search_us / 1000,
        "top5_distinct_tools_grouped": statistics.mean(grouped_distinct),
        "top5_distinct_tools_anchor_ungrouped": statistics.mean(flat_distinct),
        "recall5_grouped": found / len(queries),
        "recall5_anchor_ungrouped": flat_found / len(queries),
        "target_build_s": 0.5,
    }


# -- 3. the event loop -------------------------------------------------------------------------------------


async def longest_stall(action: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    """(longest gap of a 1 ms ticker beyond its tick, duration of ``action``), both in seconds."""
    gaps: list[float] = []
    done = anyio.Event()
    ticking = anyio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await anyio.sleep(TICK)
            now = time.perf_counter()
            gaps.append(now - last - TICK)
            last = now
            ticking.set()

    async with anyio.create_task_group() as group:
        group.start_soon(ticker)
        await ticking.wait()
        started = time.perf_counter()
        await action()
        took = time.perf_counter() - started
        done.set()
    return max(gaps), took


def stalls() -> dict[str, Any]:
    tools = load_catalog()["claude-flow"]
    queries = [q.text for q in load_queries()]

    async def measure() -> dict[str, Any]:
        # The noise floor: the same ticker while this process does nothing else for half a second.
        idle = await longest_stall(lambda: anyio.sleep(0.5))
        figures: dict[str, Any] = {"stall_idle_ms": idle[0] * 1000}
        for mode in ("worker", "anchor_on_loop"):
            clear_caches()
            registry = flow_servers()
            index = SearchIndex(registry)
            registry.register(SearchToolsTool(index), internal=True)

            async def search(
                query: str, index: SearchIndex = index, registry: ToolRegistry = registry, mode: str = mode
            ) -> None:
                if mode == "worker":
                    await registry.execute("search_tools", {"query": query}, PINNED)
                else:
                    index.search(query, limit=8)

            gc.collect()  # the set-up's garbage is not the index's to collect
            async with anyio.create_task_group() as background:
                if mode == "worker":
                    await background.start(index.maintain)
                first = await longest_stall(lambda: search("store a value in memory"))

                async def swap_then_search(registry: ToolRegistry = registry) -> None:
                    registry.replace_server("cf03", server_tools("cf03", tools), internal=True)
                    await search("start a new swarm of agents")

                swapped = await longest_stall(swap_then_search)

                async def many() -> None:
                    for query in queries[:100]:
                        await search(query)

                searches = await longest_stall(many)
                background.cancel_scope.cancel()
            figures[f"stall_{mode}_first_search_ms"] = first[0] * 1000
            figures[f"stall_{mode}_first_search_latency_ms"] = first[1] * 1000
            figures[f"stall_{mode}_after_list_changed_ms"] = swapped[0] * 1000
            figures[f"stall_{mode}_after_list_changed_latency_ms"] = swapped[1] * 1000
            figures[f"stall_{mode}_{len(queries[:100])}_searches_ms"] = searches[0] * 1000
        figures["target_stall_ms"] = 20
        return figures

    return anyio.run(measure)


# -- 4. context --------------------------------------------------------------------------------------------


def schema_bytes(registry: ToolRegistry, scope: TurnScope) -> int:
    return len(json.dumps(registry.schemas_for_tools(scope, FORMAT)).encode())


def context() -> dict[str, Any]:
    everything = flow_servers(internal=False)
    all_bytes = schema_bytes(everything, TurnScope())
    queries = [q.text for q in load_queries()][:33]

    async def session(auto_unlock: int, capped: bool) -> dict[str, int]:
        registry = flow_servers()
        index = SearchIndex(registry)
        registry.register(SearchToolsTool(index, auto_unlock=auto_unlock), internal=True)
        caps: dict[str, Any] = {} if capped else {"max_tools": None, "max_tokens": None}
        discovery = Discovery(registry, mode="conversation", offer_search=True, **caps)
        start = discovery.scope_for_turn(TurnScope())
        sizes = {"start_bytes": schema_bytes(registry, start), "start_tools": len(registry.visible_tools(start))}
        for number, query in enumerate(queries, start=1):
            result = await registry.execute(
                "search_tools", {"query": query}, discovery.scope_for_turn(TurnScope()), discovery=discovery
            )
            if number == 1:
                scope = discovery.scope_for_turn(TurnScope())
                sizes["after_one_bytes"] = schema_bytes(registry, scope)
                sizes["result_bytes"] = len(result.text_content().encode())
        scope = discovery.scope_for_turn(TurnScope())
        sizes["after_33_bytes"] = schema_bytes(registry, scope)
        sizes["after_33_tools"] = len(registry.visible_tools(scope))
        return sizes

    now = anyio.run(session, 1, True)
    before = anyio.run(session, 8, False)
    return {
        "context_all_tools_global_bytes": all_bytes,
        "context_all_tools_count": len(everything),
        "context_turn_start_bytes": now["start_bytes"],
        "context_turn_start_tools": now["start_tools"],
        "context_search_result_bytes": now["result_bytes"],
        "context_after_one_search_bytes": now["after_one_bytes"],
        "context_after_33_searches_bytes": now["after_33_bytes"],
        "context_after_33_searches_tools": now["after_33_tools"],
        "context_anchor_after_33_searches_bytes": before["after_33_bytes"],
        "context_anchor_after_33_searches_tools": before["after_33_tools"],
    }


# -- 5. embedding cost -------------------------------------------------------------------------------------

ANCHOR_SAMPLE = 300
NUMPY_SAMPLE = 1000


def distinct_tool(tool: types.Tool, number: int) -> types.Tool:
    """The tool as no other server has it: its first sentence and its input schema name the copy."""
    return tool.model_copy(
        update={
            "description": f"Edition {number}: {tool.description}",
            "input_schema": {**tool.input_schema, "description": f"edition {number}"},
        }
    )


def old_text(document: _documents.SearchDocument, spec: Any) -> str:
    """The text a tool was embedded by before the short form: name, title, whole description, parameters."""
    parameters = " ".join(spec.input_schema.get("properties", {}))
    return f"{document.local_name.replace('_', ' ')}. {spec.title or ''}. {spec.description} Parameters: {parameters}"


def embedding() -> dict[str, Any]:
    """Part 5: a cold semantic index of 10,237 different tools, beside anchors measured in the same run."""
    if not semantic_available():
        print("  embedding cost: not measured (the semantic packages are not installed)")
        return {}
    from tokenizers import Tokenizer

    from toolsift.search import _minilm_onnx
    from toolsift.search._minilm import MiniLM, model_folder

    tools = load_catalog()["claude-flow"]
    registry = ToolRegistry()
    for number in range(SERVERS):
        server = f"cf{number:02d}"
        registry.replace_server(server, server_tools(server, [distinct_tool(t, number) for t in tools]), internal=True)
    load = os.getloadavg()[0]
    bm25 = SearchIndex(registry)
    wall, cpu = time.perf_counter(), time.process_time()
    bm25.refresh()
    bm25_wall, bm25_cpu = time.perf_counter() - wall, time.process_time() - cpu
    documents = bm25.documents
    folder = model_folder()
    assert folder is not None
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)

    def pieces(texts: list[str]) -> int:
        return sum(len(encoding.ids) for encoding in tokenizer.encode_batch(texts))

    embed = load_local_embedder()  # loaded once per process, before any timing
    graph_s = None
    if isinstance(embed, _minilm_onnx.OnnxMiniLM):
        with tempfile.TemporaryDirectory() as empty:
            started = time.perf_counter()
            _minilm_onnx.OnnxMiniLM(folder, Path(empty))  # the graph built, as a first process does
            graph_s = time.perf_counter() - started
    texts = [doc.text for doc in documents]
    numpy_sample = texts[:: max(1, len(texts) // NUMPY_SAMPLE)][:NUMPY_SAMPLE]
    numpy_encoder = MiniLM(folder)
    numpy_load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    numpy_rows = numpy_encoder(numpy_sample)
    numpy_wall, numpy_cpu = time.perf_counter() - wall, time.process_time() - cpu
    cosine = (np.asarray(embed(numpy_sample)) * numpy_rows).sum(axis=1)
    specs = {tool.spec.name: tool.spec for tool in registry}
    sample = documents[:: max(1, len(documents) // ANCHOR_SAMPLE)][:ANCHOR_SAMPLE]
    old = [old_text(doc, specs[doc.name]) for doc in sample]
    wall, cpu = time.perf_counter(), time.process_time()
    embed(old)
    old_wall, old_cpu = time.perf_counter() - wall, time.process_time() - cpu
    scale = len(documents) / len(sample)
    with tempfile.TemporaryDirectory() as cache:
        semantic = SemanticBackend(embed, cache_folder=Path(cache), server_share=SERVER_SHARE)
        index = SearchIndex(registry, backend=bm25_and(semantic))
        cold_load = os.getloadavg()[0]
        wall, cpu = time.perf_counter(), time.process_time()
        index.refresh()
        cold_wall, cold_cpu = time.perf_counter() - wall, time.process_time() - cpu
        restarted = SemanticBackend(embed, cache_folder=Path(cache), server_share=SERVER_SHARE)
        started = time.perf_counter()
        SearchIndex(registry, backend=bm25_and(restarted)).refresh()
        restart_s = time.perf_counter() - started
        queries = [q.text for q in load_queries()]
        cycle = iter(queries * 20)
        hybrid_us = median_us(lambda: index.search(next(cycle), limit=8), repeat=len(queries))
        bm25_us = median_us(lambda: bm25.search(next(cycle), limit=8), repeat=len(queries))
    return {
        "cores": os.cpu_count(),
        "embedder": getattr(embed, "producer", type(embed).__name__),
        "load_average_before": load,
        "load_average_after": os.getloadavg()[0],
        "tools": len(registry),
        "ranked_documents": len(documents),
        "embedded_texts": semantic.embedded,
        "word_pieces_per_text": pieces(texts) / len(texts),
        "cold_embedding_wall_s": cold_wall,
        "cold_embedding_cpu_s": cold_cpu,
        "cold_embedding_load_average": cold_load,
        "graph_build_and_load_s": graph_s if graph_s is not None else "no graph (numpy encoder)",
        "anchor_numpy_float32_sample_texts": len(numpy_sample),
        "anchor_numpy_float32_extrapolated_wall_s": numpy_wall * len(texts) / len(numpy_sample),
        "anchor_numpy_float32_extrapolated_cpu_s": numpy_cpu * len(texts) / len(numpy_sample),
        "anchor_numpy_load_average": numpy_load,
        "cosine_to_numpy_min": float(cosine.min()),
        "cosine_to_numpy_mean": float(cosine.mean()),
        "anchor_bm25_build_wall_s": bm25_wall,
        "anchor_bm25_build_cpu_s": bm25_cpu,
        "anchor_old_text_word_pieces_per_text": pieces(old) / len(old),
        "anchor_old_text_extrapolated_wall_s": old_wall * scale,
        "anchor_old_text_extrapolated_cpu_s": old_cpu * scale,
        "after_restart_s": restart_s,
        "after_restart_embedded": restarted.embedded,
        "bm25_query_median_ms": bm25_us / 1000,
        "hybrid_query_median_ms": hybrid_us / 1000,
        "target_cold_embedding_s": 60,
        "target_hybrid_query_ms": 20,
        "target_bm25_query_ms": 5,
    }


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Tool search: every part, saved; or one part, printed.")
    part = parser.add_mutually_exclusive_group()
    part.add_argument(
        "--public",
        nargs="*",
        metavar="NAME|SPLIT",
        help=f"only part 0, the public evaluations: sources ({', '.join(SOURCES)}; default all) and splits "
        f"({', '.join(_public_eval.SPLITS)}; default both), e.g. --public etom tune",
    )
    part.add_argument("--ranking", action="store_true", help="only part 1, the project's own query sets")
    part.add_argument("--scale", action="store_true", help="only parts 2-4: 10,000 tools, stalls, context")
    part.add_argument("--embed", action="store_true", help="only part 5, cold embedding")
    part.add_argument(
        "--weak",
        nargs="?",
        const="heldout",
        choices=_public_eval.SPLITS,
        help="only how well weak hits mark needs no tool meets",
    )
    add_public_options(parser)
    return parser.parse_args()


def _print(figures: dict[str, Any]) -> None:
    for key, value in figures.items():
        print(f"  {key}: {value:.3f}" if isinstance(value, float) else f"  {key}: {value}")


def main() -> None:
    arguments = _arguments()
    if arguments.public is not None:
        run(public_request(arguments))
        return
    if arguments.ranking:
        _print(ranking(tuple(arguments.backend or BACKENDS)))
        return
    if arguments.embed:
        _print(embedding())
        return
    if arguments.weak is not None:
        weak(arguments.weak, getattr(arguments, "etom", None))
        return
    if arguments.scale:
        stall_figures = stalls()  # first, as below
        _print({**scale(), **stall_figures, **context()})
        return
    # Stalls first: a gen-2 garbage collection during a build stalls the loop in proportion to the heap,
    # and the other parts leave this process a heap larger than an agent's with 10,000 tools.
    stall_figures = stalls()
    figures = {
        **run(public_request(arguments)),
        **ranking(tuple(arguments.backend or BACKENDS)),
        **scale(),
        **stall_figures,
        **context(),
    }
    save("search", figures)


if __name__ == "__main__":
    main()
