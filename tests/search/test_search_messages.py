"""What search says when something is off: long queries, unknown servers, refusals, backends."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from local_tools import RecordingTool
from test_search_index import HashingEmbedder
from test_search_ranking import corpus_registry

from toolsift import ConfigError, InvalidArguments, PermissionDenied
from toolsift._names import SEARCH_TOOL_NAME
from toolsift.registry import Permissions, ToolRegistry, TurnScope
from toolsift.search import SearchIndex, SearchToolsTool
from toolsift.search._bm25 import Bm25Backend
from toolsift.search._documents import SearchDocument
from toolsift.search._hybrid import HybridBackend
from toolsift.search._internal import format_ranking
from toolsift.search._semantic import SemanticBackend

F = "claude-flow__"
PINNED = TurnScope(pinned=frozenset({SEARCH_TOOL_NAME}))


@pytest.fixture
def registry() -> ToolRegistry:
    registry = corpus_registry()
    registry.replace_server("vault", [RecordingTool("vault__read_secret", description="Read a secret.")], internal=True)
    registry.register(SearchToolsTool(SearchIndex(registry, unsearchable={"vault"})), internal=True)
    return registry


async def search(registry: ToolRegistry, **args: Any) -> dict[str, Any]:
    result = await registry.execute(SEARCH_TOOL_NAME, args, PINNED)
    payload: dict[str, Any] = json.loads(result.text_content())
    return payload


async def test_nothing_matches_echoes_a_long_query_cut(registry: ToolRegistry) -> None:
    query = "xylophone " * 1000
    note = (await search(registry, query=query))["note"]
    assert len(note) < 200 and note.startswith("Nothing matches 'xylophone xylophone") and "\u2026'" in note
    index = SearchIndex(registry)
    assert len(format_ranking(index, query)) < 200


async def test_an_unknown_server_is_named_and_the_searchable_ones_listed(registry: ToolRegistry) -> None:
    with pytest.raises(
        InvalidArguments,
        match=r"server: no searchable server is called 'nope'; servers with "
        r"indexed tools: claude-flow$",
    ):
        await search(registry, query="memory", server="nope")
    with pytest.raises(InvalidArguments, match="no searchable server is called 'vault'"):  # unsearchable: not told
        await search(registry, query="secret", server="vault")
    assert (await search(registry, query="memory", server="claude-flow"))["tools"]


async def test_calling_a_denylisted_internal_tool_names_the_denylist_as_search_does(registry: ToolRegistry) -> None:
    permissions = Permissions(denylist=(F + "memory_delete",))
    result = await registry.execute(SEARCH_TOOL_NAME, {"query": "delete a memory entry", "max": 3}, PINNED, permissions)
    listed = {entry["name"]: entry for entry in json.loads(result.text_content())["tools"]}
    assert listed[F + "memory_delete"]["reason"] == "layer 5: it matches the caller's denylist"
    with pytest.raises(PermissionDenied, match="denied at layer 5.*it matches the caller's denylist") as info:
        await registry.execute(F + "memory_delete", {"key": "k"}, TurnScope(), permissions)
    assert info.value.layer == 5
    # Not surfaced and allowed by layer 5: still layer 1, and so when another layer would hide it too.
    with pytest.raises(PermissionDenied, match="layer 1"):
        await registry.execute(F + "memory_store", {}, TurnScope(), permissions)
    with pytest.raises(PermissionDenied, match="layer 1"):
        await registry.execute(F + "memory_delete", {}, TurnScope(skill_allowed=("read_file",), skill="s"), permissions)


# -- backends ----------------------------------------------------------------------------------------------


def test_index_names_every_backend_when_one_is_unknown() -> None:
    with pytest.raises(ConfigError, match="unknown search backend 'vector'; available: bm25, semantic, hybrid"):
        SearchIndex(ToolRegistry(), backend="vector")  # type: ignore[arg-type]


def test_hybrid_backend_fuses_lexical_and_embedding_rankings() -> None:
    registry = ToolRegistry()
    registry.register_many(
        [
            RecordingTool("kv__store", description="store a value"),
            RecordingTool("kv__drop", description="drop a value"),
            RecordingTool("kv__list", description="list every key"),
        ]
    )
    hybrid = SearchIndex(registry, backend=HybridBackend(Bm25Backend(), SemanticBackend(HashingEmbedder())))
    assert hybrid.backend == "hybrid"
    # "persist" shares no term with any tool: only the embedding finds kv__store (it maps persist -> store).
    assert hybrid.search("persist")[0].document.name == "kv__store"
    # Both rankings agree on kv__drop for "drop value": it leads the fused ranking.
    assert hybrid.search("drop value")[0].document.name == "kv__drop"
    assert HybridBackend(Bm25Backend()).build([]).scores("x").shape == (0,)


@pytest.mark.parametrize("weights", [(1.0,), (1.0, 0.0), (1.0, -0.5), (1.0, 1.0, 1.0)])
def test_hybrid_backend_rejects_weights_not_one_positive_per_backend(weights: tuple[float, ...]) -> None:
    with pytest.raises(ValueError, match=r"one positive weight for each, got 2 backend\(s\) and weights"):
        HybridBackend(Bm25Backend(), Bm25Backend(), weights=weights)
    with pytest.raises(ValueError, match="got 0 backend"):
        HybridBackend()


class _Fixed:
    """A backend whose ranker gives the same scores to every query."""

    name = "fixed"

    def __init__(self, scores: list[float]) -> None:
        self._scores = np.array(scores, dtype=np.float32)

    def build(self, documents: Sequence[SearchDocument]) -> _Fixed:
        return self

    def scores(self, query: str) -> npt.NDArray[np.float32]:
        return self._scores


def test_hybrid_keeps_how_far_ahead_each_ranking_puts_its_first() -> None:
    # Lexical: the first document far ahead; embedding: the second barely ahead of the first.
    lexical, embedding = _Fixed([9.0, 1.0, 0.0]), _Fixed([0.50, 0.52, 0.10])
    fused = HybridBackend(lexical, embedding).build([]).scores("q")
    assert fused.argmax() == 0  # a rank fusion would tie the two: each is first once and second once
    assert fused == pytest.approx([1.0 + 0.50 / 0.52, 1.0 / 9.0 + 1.0, 0.10 / 0.52], rel=1e-5)
    weighted = HybridBackend(lexical, embedding, weights=(0.01, 0.99)).build([]).scores("q")
    assert weighted.argmax() == 1
    # A ranking that finds nothing (all zero) adds nothing.
    assert HybridBackend(_Fixed([0.0, 0.0]), _Fixed([2.0, 1.0])).build([]).scores("q") == pytest.approx([1.0, 0.5])
