"""The search evaluation set: recorded tool lists, natural-language queries, and the metrics.

``fixtures/tool_catalog.json`` holds the tools of the real claude-flow server
(353), the example ``flow`` and ``general`` servers, server-everything and the
reference ``time`` and ``git`` servers, as ``record_catalog.py`` listed them
through toolsift. ``fixtures/search_queries.json``
holds the queries, each with the tools that answer it and its half: the
``heldout`` half was written with the ``tuning`` half before any ranking change
and was never looked at while tuning, so its figures show what tuning did not
fit. The ``fresh`` split (44 queries) was written after the ranking was tuned,
over claude-flow tools no earlier query names, and committed before it was
first run: a second check of what the ranking does on queries it never saw.
The ``blind`` split (66 queries over 52 more claude-flow tools, drawn at random
among those no earlier query names, and the ``git`` and ``time`` tools) was
written and committed before its first run and before the ranking changes
made after ``fresh``; its first figures are kept in benchmarks/README.md beside today's.
The ``final`` split (44 queries over 40 more claude-flow tools, drawn the same
way, and four server-everything tools) was written after the changes the
``blind`` split prompted and committed before its first run; no ranking change
has been made since.
A tool of the same name on another server also answers a query (the ``flow``
example imitates claude-flow; ``general`` and ``everything`` both have ``echo``).

The anchor is plain ``bm25s`` over name and description, with bm25s' own
tokenizer and English stop words and no stemming, computed in the same run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bm25s
import mcp.types as types

from toolsift import ConfigError
from toolsift._names import split_name
from toolsift.config import StdioServer
from toolsift.mcp_sessions._wrapper import tool_spec
from toolsift.registry import ToolContext, ToolRegistry, ToolResult, ToolSpec
from toolsift.search._bm25 import Bm25Backend, SearchBackend
from toolsift.search._hybrid import bm25_and
from toolsift.search._semantic import SERVER_SHARE, SemanticBackend, load_local_embedder

BACKENDS = ("bm25", "semantic", "hybrid")
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CATALOG = FIXTURES / "tool_catalog.json"
QUERIES = FIXTURES / "search_queries.json"
DEPTH = 10
IMITATION = "flow"

#: One ranking: for each hit, the canonical names it stands for (several when identical tools are grouped).
Ranking = list[frozenset[str]]


class CatalogTool:
    """A recorded tool; ranking never calls it."""

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:  # pragma: no cover
        return ToolResult.text("not called")


@dataclass(frozen=True)
class Query:
    text: str
    expected: tuple[str, ...]
    split: str


@dataclass
class Metrics:
    """recall@1, recall@3 and MRR (over the top 10) of one ranking function on some queries."""

    queries: int
    recall1: float
    recall3: float
    mrr: float
    misses: dict[str, int | None] = field(default_factory=dict)

    def row(self) -> str:
        return f"recall@1 {self.recall1:.2f}  recall@3 {self.recall3:.2f}  MRR {self.mrr:.2f}  ({self.queries} queries)"


def load_catalog() -> dict[str, list[types.Tool]]:
    """Server name -> its recorded tools."""
    data = json.loads(CATALOG.read_text())
    return {server: [types.Tool.model_validate(tool) for tool in tools] for server, tools in data["servers"].items()}


def server_tools(server: str, tools: Sequence[types.Tool]) -> list[CatalogTool]:
    """``tools`` as a session registers them for ``server``."""
    config = StdioServer(command="recorded").with_name(server)
    return [CatalogTool(tool_spec(config, tool)) for tool in tools]


def eval_registry(*, imitation: bool = False) -> ToolRegistry:
    """The recorded servers' tools, internal, as sessions would register them.

    Args:
        imitation: Also the ``flow`` example, which imitates claude-flow under other
            names (``swarm_destroy`` for ``swarm_shutdown``): a query then has right
            answers the query file does not name, so it is reported apart.
    """
    registry = ToolRegistry()
    for server, tools in load_catalog().items():
        if imitation or server != IMITATION:
            registry.replace_server(server, server_tools(server, tools), internal=True)
    return registry


def load_queries(split: str | None = None) -> list[Query]:
    """The queries, all or one split (``tuning``, ``heldout``, ``fresh``, ``blind`` or ``final``)."""
    raw = json.loads(QUERIES.read_text())["queries"]
    queries = [Query(q["query"], tuple(q["expected"]), q["split"]) for q in raw]
    return [q for q in queries if split is None or q.split == split]


def answers(query: Query, names: Sequence[str]) -> frozenset[str]:
    """The tools that answer ``query``: those expected, and tools of the same name on other servers."""
    bare = {split_name(name)[1] for name in query.expected}
    return frozenset(query.expected) | {name for name in names if split_name(name)[1] in bare}


def evaluate(rank: Callable[[str], Ranking], queries: Sequence[Query], names: Sequence[str]) -> Metrics:
    """Score ``rank`` (query -> ranking) on ``queries``."""
    positions: dict[str, int | None] = {}
    for query in queries:
        good = answers(query, names)
        ranking = rank(query.text)[:DEPTH]
        positions[query.text] = next((i for i, hit in enumerate(ranking, start=1) if hit & good), None)
    values = list(positions.values())
    return Metrics(
        queries=len(values),
        recall1=sum(p == 1 for p in values) / len(values),
        recall3=sum(p is not None and p <= 3 for p in values) / len(values),
        mrr=sum(1 / p for p in values if p is not None) / len(values),
        misses={q: p for q, p in positions.items() if p != 1},
    )


def bm25s_ranker(names: Sequence[str], corpus: Sequence[str]) -> Callable[[str], Ranking]:
    """Plain bm25s over ``corpus`` (bm25s tokenizer, English stop words, no stemming), hits named by ``names``."""
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(list(corpus), stopwords="en", show_progress=False), show_progress=False)

    def rank(query: str) -> Ranking:
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        docs, scores = retriever.retrieve(tokens, k=min(DEPTH, len(names)), show_progress=False)
        return [frozenset({names[int(d)]}) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    return rank


def plain_bm25s(registry: ToolRegistry) -> Callable[[str], Ranking]:
    """The anchor: bm25s over ``name + description``."""
    specs = [tool.spec for tool in registry]
    return bm25s_ranker(
        [spec.name for spec in specs], [f"{split_name(spec.name)[1]} {spec.description}" for spec in specs]
    )


def backends(only: Sequence[str] = BACKENDS) -> dict[str, Callable[[], SearchBackend]]:
    """Each backend of ``only`` available here; the semantic ones share one model (hybrid's mixes in servers' texts).

    The model is loaded only when ``only`` names a semantic backend; without it those are skipped, saying why.
    """
    available: dict[str, Callable[[], SearchBackend]] = {"bm25": Bm25Backend} if "bm25" in only else {}
    if not {"semantic", "hybrid"} & set(only):
        return available
    try:
        embedder = load_local_embedder()
    except ConfigError as exc:
        print(f"  semantic and hybrid backends: not measured ({exc})")
        return available
    if "semantic" in only:
        semantic = SemanticBackend(embedder)
        available["semantic"] = lambda: semantic
    if "hybrid" in only:
        mixed = SemanticBackend(embedder, server_share=SERVER_SHARE)
        available["hybrid"] = lambda: bm25_and(mixed)
    return available
