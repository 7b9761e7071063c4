"""Ranking: the evaluation set, fielded scoring, sibling mentions, exact names, identical tools grouped."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from local_tools import RecordingTool

from toolsift.registry import ToolRegistry
from toolsift.search import SearchIndex
from toolsift.search._bm25 import Bm25Backend
from toolsift.search._documents import tool_document, without_mentions
from toolsift.search._fielded import FieldedIndex
from toolsift.search._query import expand
from toolsift.search._server_prior import SERVER_PRIOR
from toolsift.search._tokens import name_key

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _search_eval import Metrics, Query, eval_registry, evaluate, load_catalog, load_queries, plain_bm25s

CF = "claude-flow__"


@pytest.fixture(scope="module")
def flow() -> SearchIndex:
    """The recorded tools of the real claude-flow server (with general and everything)."""
    return SearchIndex(eval_registry())


def names(index: SearchIndex, query: str, **kwargs: Any) -> list[str]:
    return [hit.document.name for hit in index.search(query, **kwargs)]


def test_evaluation_set_has_its_five_splits_over_the_recorded_tools() -> None:
    assert len(load_catalog()["claude-flow"]) == 353
    assert {"time", "git", "everything"} <= set(load_catalog())
    queries = load_queries()
    splits = {query.split for query in queries}
    assert len(queries) >= 60 and splits == {"tuning", "heldout", "fresh", "blind", "final"}
    assert min(len(load_queries(split)) for split in splits) >= 30
    registered = {tool.spec.name for tool in eval_registry()}
    assert {name for query in queries for name in query.expected} <= registered


def test_default_backend_reaches_the_recall_targets_and_beats_plain_bm25s(flow: SearchIndex) -> None:
    tool_names = [doc.name for doc in flow.documents]
    anchor = plain_bm25s(flow.registry)

    def measured(queries: list[Query]) -> tuple[Metrics, Metrics]:
        ours = evaluate(lambda q: [frozenset(d.name for d in h.members) for h in flow.search(q)], queries, tool_names)
        return ours, evaluate(anchor, queries, tool_names)

    ours, _ = measured(load_queries())
    assert ours.recall1 >= 0.80 and ours.recall3 >= 0.95, ours.misses
    # Every split on its own beats the anchor: the splits written later were not fitted.
    for split in ("tuning", "heldout", "fresh", "blind", "final"):
        ours, plain = measured(load_queries(split))
        assert ours.recall1 > plain.recall1 and ours.recall3 > plain.recall3 and ours.mrr > plain.mrr, split


@pytest.mark.parametrize(
    ("query", "tool"),
    [
        ("store a value in memory", "memory_store"),
        ("shut the swarm down", "swarm_shutdown"),  # two words written apart that the name writes as one
    ],
)
def test_user_reported_queries_rank_the_tool_first(flow: SearchIndex, query: str, tool: str) -> None:
    assert names(flow, query, limit=1) == [CF + tool]


def test_start_a_new_swarm_finds_swarm_init_in_the_top_three(flow: SearchIndex) -> None:
    # "start" and "initialize" name one action (a weak synonym), "init" is short for "initialize".
    assert CF + "swarm_init" in names(flow, "start a new swarm of agents", limit=3)


def test_a_name_match_outweighs_the_same_words_repeated_in_a_description() -> None:
    registry = ToolRegistry()
    registry.register_many(
        [
            RecordingTool(
                "kv__store_value",
                description="Keep a datum under a key for later sessions; it survives "
                "restarts and is replicated to every node of the cluster.",
            ),
            RecordingTool("kv__audit", description="Store value store value: lists each store value call."),
        ]
    )
    assert names(SearchIndex(registry), "store value")[0] == "kv__store_value"


def test_scores_are_scaled_by_the_share_of_the_query_a_tool_meets() -> None:
    tools = [
        RecordingTool("ops__system_report", description="Report on the system."),
        RecordingTool(
            "ops__tune",
            description="Optimize slow caches.",
            schema={"type": "object", "properties": {"system": {"type": "string"}}},
        ),
        RecordingTool("ops__clear", description="Clear the caches of the system."),
        RecordingTool("ops__backup", description="Back up the database."),
    ]
    documents = [tool_document(tool.spec) for tool in tools]
    scorer = FieldedIndex().build(documents)
    query = "optimize the system caches"
    read = expand(query, scorer.vocabulary, scorer.stems)
    raw = scorer.scores(read.weights)
    # report meets "system"; tune "optimize", "caches" and, by its parameter's name, "system"; clear two of three.
    assert raw[3] == 0 and all(raw[:3] > 0)
    met = np.array([1, 3, 2, 0]) / 3
    # One server meets the whole query, so every tool gains the same server prior.
    assert np.allclose(Bm25Backend().build(documents).scores(query), raw * np.sqrt(met) * (1 + SERVER_PRIOR))


def test_a_description_naming_a_sibling_tool_does_not_rank_for_that_name() -> None:
    siblings = {name_key("memory_store"), name_key("memory_retrieve")}
    text = "Read back a value stored via memory_store, or via `memory-store`; see memory_retrieve and foo_bar."
    assert without_mentions(text, siblings, own=name_key("memory_retrieve")) == (
        "Read back a value stored via  , or via ` `; see memory_retrieve and foo_bar."
    )
    registry = ToolRegistry()
    registry.register_many(
        [
            RecordingTool("m__memory_store", description="Persistent key-value store with vector embedding."),
            RecordingTool("m__memory_retrieve", description="Read back a value previously written by memory_store."),
        ]
    )
    doc = tool_document(registry.get("m__memory_retrieve").spec, siblings=siblings)
    assert "store" not in doc.fields["description"] and "memory" in doc.fields["name"]
    assert names(SearchIndex(registry), "memory store value")[0] == "m__memory_store"


# -- exact names -------------------------------------------------------------------------------------------


def mcp_tool(name: str, description: str) -> RecordingTool:
    """A tool as a session registers it: its name on its server kept as ``remote_name``."""
    tool = RecordingTool(name, description=description)
    tool.spec = replace(tool.spec, remote_name=name.split("__", 1)[1])
    return tool


@pytest.fixture
def named() -> SearchIndex:
    registry = ToolRegistry()
    registry.register_many(
        [
            mcp_tool("cf__memory_store", "Persistent key-value store."),
            mcp_tool("cf__memory_retrieve", "Read back a value by key."),
            mcp_tool("cf__swarm_status", "Get swarm status from persistent state."),
            mcp_tool("ev__echo", "Echoes back the input string."),
            mcp_tool("web__fetch", "Download a URL."),
            mcp_tool("cf__hooks_pre-edit", "Context before editing a file."),
        ]
    )
    return SearchIndex(registry)


@pytest.mark.parametrize(
    "query", ["memory-store", "Memory_Store", "memory store", "memoryStore", "cf memory store", " `memory_store` "]
)
def test_a_query_that_is_a_tool_name_written_any_way_finds_only_that_tool(named: SearchIndex, query: str) -> None:
    hits = named.search(query)
    assert [(hit.document.name, hit.exact) for hit in hits] == [("cf__memory_store", True)]


def test_hyphenated_and_spaced_names_meet(named: SearchIndex) -> None:
    assert [hit.exact for hit in named.search("hooks pre edit")] == [True]
    assert names(named, "hooks pre edit") == ["cf__hooks_pre-edit"]


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("echo the swarm status", "cf__swarm_status"),
        ("fetch the value by its key", "cf__memory_retrieve"),
    ],
)
def test_ordinary_words_that_are_also_tool_names_are_not_exact_matches(
    named: SearchIndex, query: str, first: str
) -> None:
    hits = named.search(query)
    assert hits[0].document.name == first and not any(hit.exact for hit in hits)


# -- identical tools on several servers --------------------------------------------------------------------


def test_the_same_tool_on_several_servers_is_one_hit_listing_them() -> None:
    registry = ToolRegistry()
    schema = {"type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "string"}}}
    for server in ("a", "b", "c"):
        registry.replace_server(
            server,
            [
                RecordingTool(f"{server}__memory_store", schema=schema, description="Store a value under a key."),
                RecordingTool(f"{server}__memory_list", schema=schema, description="List stored keys."),
            ],
            internal=True,
        )
    other = {"type": "object", "properties": {"blob": {"type": "string"}}}
    registry.replace_server(
        "d", [RecordingTool("d__memory_store", schema=other, description="Store a value as a blob.")], internal=True
    )
    index = SearchIndex(registry)
    hits = index.search("store a value", limit=5)
    assert sorted((hit.document.name, hit.servers) for hit in hits[:2]) == [
        ("a__memory_store", ["a", "b", "c"]),
        ("d__memory_store", ["d"]),
    ]
    assert len({hit.document.identity for hit in hits}) == len(hits)
    assert [hit.servers for hit in index.search("store a value", server="b", limit=1)] == [["b"]]
    exact = index.search("memory_store")
    assert [(hit.document.name, len(hit.members), hit.exact) for hit in exact] == [
        ("a__memory_store", 3, True),
        ("d__memory_store", 1, True),
    ]
