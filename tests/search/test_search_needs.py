"""``search_tools`` with several needs at once: each searched on its own, each tool described once."""

from __future__ import annotations

import pytest
from test_search_ranking import corpus_registry
from test_search_unlock import offering, search

from toolsift import InvalidArguments
from toolsift._names import SEARCH_TOOL_NAME
from toolsift.registry import ToolRegistry, TurnScope
from toolsift.search import SearchIndex, SearchToolsTool

F = "claude-flow__"
STORE, SAVE, SWARM = "store a value in memory", "save a value to memory", "start a new swarm of agents"


@pytest.fixture
def registry() -> ToolRegistry:
    registry = corpus_registry()
    registry.register(SearchToolsTool(SearchIndex(registry)), internal=True)
    return registry


async def test_each_need_is_searched_on_its_own_and_its_best_hit_unlocked(registry: ToolRegistry) -> None:
    discovery = offering(registry)
    payload = await search(registry, discovery, queries=[STORE, SWARM])
    needs = {need["query"]: need["tools"] for need in payload["needs"]}
    assert list(needs) == [STORE, SWARM] and all(len(found) == 3 for found in needs.values())
    assert needs[STORE][0] == F + "memory_store" and needs[SWARM][0] == F + "swarm_init"
    assert payload["unlocked"] == [F + "memory_store", F + "swarm_init"]
    assert discovery.unlocked == {F + "memory_store", F + "swarm_init"}


async def test_a_tool_several_needs_find_is_described_once(registry: ToolRegistry) -> None:
    payload = await search(registry, offering(registry), queries=[STORE, SAVE, SWARM])
    named = [name for need in payload["needs"] for name in need["tools"]]
    described = [entry["name"] for entry in payload["tools"]]
    assert named.count(F + "memory_store") == 2 and described.count(F + "memory_store") == 1
    assert sorted(described) == sorted(set(named)) and len(described) < len(named)
    assert all(set(entry) >= {"name", "description", "callable"} for entry in payload["tools"])


async def test_query_and_queries_together_are_one_list_of_needs_without_repeats(registry: ToolRegistry) -> None:
    payload = await search(registry, offering(registry), query=STORE, queries=[SWARM, STORE], max=2)
    assert [(need["query"], len(need["tools"])) for need in payload["needs"]] == [(STORE, 2), (SWARM, 2)]


async def test_a_need_nothing_matches_is_named_and_the_others_still_answer(registry: ToolRegistry) -> None:
    long = "xylophone " * 20
    payload = await search(registry, offering(registry), queries=[STORE, long])
    assert payload["needs"][1] == {"query": long[:79] + "\u2026", "tools": []}
    assert payload["note"].startswith(f"No tool matches {long[:79] + chr(0x2026)!r}; try other words for it.")
    assert payload["unlocked"] == [F + "memory_store"]
    nothing = await search(registry, offering(registry), queries=["xylophone", "glockenspiel"])
    assert nothing["tools"] == [] and nothing["note"].startswith("Nothing matches any query")


async def test_the_unlock_cap_holds_across_the_needs_of_one_call(registry: ToolRegistry) -> None:
    discovery = offering(registry, max_tools=1)
    payload = await search(registry, discovery, queries=[STORE, SWARM])
    assert discovery.unlocked == {F + "swarm_init"} and payload["evicted"] == [F + "memory_store"]


async def test_needs_are_validated(registry: ToolRegistry) -> None:
    with pytest.raises(InvalidArguments, match="is too long"):
        await registry.execute(
            SEARCH_TOOL_NAME,
            {"queries": [f"need {i}" for i in range(9)]},
            offering(registry).scope_for_turn(TurnScope()),
        )
    with pytest.raises(InvalidArguments, match="should be non-empty"):
        await registry.execute(SEARCH_TOOL_NAME, {"queries": []}, offering(registry).scope_for_turn(TurnScope()))


def test_the_description_teaches_searching_per_step(registry: ToolRegistry) -> None:
    spec = registry.spec(SEARCH_TOOL_NAME)
    assert "Search per step, not per task" in spec.description and "'queries'" in spec.description
    assert spec.input_schema["properties"]["queries"]["maxItems"] == 8
