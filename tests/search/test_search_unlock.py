"""What reaches the context: chosen unlocks, the capped LRU unlocked set, search offered when useful."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from local_tools import RecordingTool
from test_search_ranking import corpus_registry

from toolsift import InvalidArguments, PermissionDenied
from toolsift._names import SEARCH_TOOL_NAME
from toolsift.registry import CallRecord, Permissions, ToolRegistry, TurnScope
from toolsift.search import Discovery, SearchIndex, SearchToolsTool
from toolsift.search._discovery import estimated_tokens

F = "claude-flow__"


@pytest.fixture
def registry() -> ToolRegistry:
    registry = corpus_registry()
    registry.register(RecordingTool("read_file", read_only=True, description="Read a text file."))
    registry.replace_server("vault", [RecordingTool("vault__read_secret", description="Read a secret.")], internal=True)
    registry.register(SearchToolsTool(SearchIndex(registry, unsearchable={"vault"})), internal=True)
    return registry


async def search(
    registry: ToolRegistry,
    discovery: Discovery | None,
    permissions: Permissions | None = None,
    scope: TurnScope | None = None,
    **args: Any,
) -> dict[str, Any]:
    base = scope or TurnScope()
    turn = discovery.scope_for_turn(base) if discovery is not None else base.with_pinned([SEARCH_TOOL_NAME])
    result = await registry.execute(SEARCH_TOOL_NAME, args, turn, permissions, discovery=discovery)
    payload: dict[str, Any] = json.loads(result.text_content())
    return payload


def offering(registry: ToolRegistry, **kwargs: Any) -> Discovery:
    return Discovery(registry, mode="conversation", offer_search=True, **kwargs)


# -- chosen unlocks ----------------------------------------------------------------------------------------


async def test_a_search_unlocks_its_best_hit_and_the_model_unlocks_others_by_name(registry: ToolRegistry) -> None:
    discovery = offering(registry)
    payload = await search(registry, discovery, query="store a value in memory", max=5)
    listed = [entry["name"] for entry in payload["tools"]]
    assert listed[0] == F + "memory_store" and len(listed) == 5
    assert payload["unlocked"] == [F + "memory_store"] and discovery.unlocked == {F + "memory_store"}
    assert "unlock: [its name]" in payload["note"]
    chosen = await search(registry, discovery, unlock=[listed[1], listed[2]])
    assert chosen["unlocked"] == listed[1:3] and discovery.unlocked == set(listed[:3])
    assert "tools" not in chosen
    visible = {tool.spec.name for tool in registry.visible_tools(discovery.scope_for_turn(TurnScope()))}
    assert set(listed[:3]) <= visible and not set(listed[3:]) & visible


async def test_unlock_refuses_names_it_would_not_list_and_says_why(registry: ToolRegistry) -> None:
    discovery = offering(registry)
    permissions = Permissions(denylist=(F + "memory_delete",))
    scope = TurnScope(agent_allowed=(SEARCH_TOOL_NAME, "claude-flow__memory_*"), agent="a")
    asked = [F + "memory_delete", F + "swarm_init", "vault__read_secret", "nope", F + "memory_list"]
    payload = await search(registry, discovery, permissions, scope, unlock=asked)
    unknown = "no such tool among those search_tools finds; use a name from a search result"
    assert payload["refused"] == [
        {"name": F + "memory_delete", "reason": "layer 5: it matches the caller's denylist"},
        {"name": F + "swarm_init", "reason": unknown},  # outside the agent allowlist: not revealed
        {"name": "vault__read_secret", "reason": unknown},  # unsearchable server
        {"name": "nope", "reason": unknown},
    ]
    assert payload["unlocked"] == [F + "memory_list"] and discovery.unlocked == {F + "memory_list"}


async def test_search_tools_needs_a_query_or_names_to_unlock(registry: ToolRegistry) -> None:
    with pytest.raises(
        InvalidArguments,
        match=r"give a 'query' \(or several in 'queries'\), or the names of "
        r"listed tools to 'unlock'",
    ):
        await search(registry, offering(registry), unlock=[])


async def test_the_same_tool_on_several_servers_is_listed_once_with_a_callable_server_first() -> None:
    registry = ToolRegistry()
    for server in ("a", "b", "c"):
        registry.replace_server(
            server, [RecordingTool(f"{server}__memory_store", description="Store a value.")], internal=True
        )
    registry.register(SearchToolsTool(SearchIndex(registry)), internal=True)
    payload = await search(registry, offering(registry), Permissions(denylist=("a__*",)), query="store a value")
    assert [(e["name"], e["callable"], e["also_on"]) for e in payload["tools"]] == [
        ("b__memory_store", True, ["a", "c"])
    ]


# -- the unlocked set is capped ----------------------------------------------------------------------------


def test_unlocking_past_the_tool_cap_evicts_the_least_recently_used(registry: ToolRegistry) -> None:
    discovery = Discovery(registry, max_tools=2, max_tokens=None)
    first, second, third = F + "memory_store", F + "memory_list", F + "swarm_init"
    assert discovery.unlock([first, second]).evicted == []
    discovery.touch(first)  # a call: first is now the most recently used
    changed = discovery.unlock([third])
    assert changed.added == [third] and changed.evicted == [second]
    assert discovery.unlocked == {first, third}


async def test_a_call_through_the_wrapped_handler_counts_as_use(registry: ToolRegistry) -> None:
    discovery = Discovery(registry, max_tools=2, max_tokens=None)
    first, second = F + "memory_store", F + "memory_list"
    discovery.unlock([first, second])
    handler = discovery.wrap(registry.handle)
    await handler(CallRecord(first, {"key": "k", "value": "v"}, discovery.scope_for_turn(TurnScope())))
    assert discovery.unlock([F + "swarm_init"]).evicted == [second]


def test_the_token_cap_evicts_until_the_declarations_fit_but_keeps_the_newest(registry: ToolRegistry) -> None:
    names = [F + "memory_store", F + "memory_list", F + "swarm_init"]
    sizes = [estimated_tokens(registry, name) for name in names]
    discovery = Discovery(registry, max_tools=None, max_tokens=sizes[1] + sizes[2])
    discovery.unlock(names[:2])
    assert discovery.unlock(names[2:]).evicted == [names[0]] and discovery.unlocked_tokens <= sizes[1] + sizes[2]
    tiny = Discovery(registry, max_tools=None, max_tokens=1)
    assert tiny.unlock(names).evicted == names[:2] and tiny.unlocked == {names[2]}


@pytest.mark.parametrize(
    ("caps", "message"),
    [
        ({"max_tools": 0}, "max_tools=0"),
        ({"max_tokens": -5}, "max_tokens=-5"),
    ],
)
def test_discovery_rejects_caps_below_one(registry: ToolRegistry, caps: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=f"max_tools and max_tokens must be at least 1.*{message}"):
        Discovery(registry, **caps)  # type: ignore[arg-type]


async def test_33_searches_in_a_conversation_stay_within_the_default_caps(registry: ToolRegistry) -> None:
    from test_search_ranking import QUERIES

    discovery = offering(registry)
    for query, _ in QUERIES[:33]:
        payload = await search(registry, discovery, query=query)
        assert set(payload.get("evicted", ())).isdisjoint(discovery.unlocked)
    assert 0 < len(discovery.unlocked) <= 16 and discovery.unlocked_tokens <= 10_000


# -- search_tools offered when there is something to find ---------------------------------------------------


def scope_names(registry: ToolRegistry, scope: TurnScope) -> set[str]:
    return {tool.spec.name for tool in registry.visible_tools(scope)}


def test_search_is_offered_without_a_skill_while_internal_tools_are_hidden(registry: ToolRegistry) -> None:
    discovery = offering(registry, unsearchable=lambda: {"vault"})
    assert SEARCH_TOOL_NAME in scope_names(registry, discovery.scope_for_turn(TurnScope()))
    with_skill = discovery.scope_for_turn(TurnScope(skill_allowed=("read_file",), skill="s"))
    assert SEARCH_TOOL_NAME not in scope_names(registry, with_skill)
    only_globals = discovery.scope_for_turn(TurnScope(agent_allowed=("read_file", SEARCH_TOOL_NAME)))
    assert SEARCH_TOOL_NAME not in scope_names(registry, only_globals)  # nothing it could find may be called
    nothing_searchable = offering(registry, unsearchable=lambda: {"claude-flow", "vault"})
    assert SEARCH_TOOL_NAME not in scope_names(registry, nothing_searchable.scope_for_turn(TurnScope()))
    refused = offering(registry, permissions=Permissions(denylist=(SEARCH_TOOL_NAME,)))
    assert SEARCH_TOOL_NAME not in scope_names(registry, refused.scope_for_turn(TurnScope()))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    skill=st.none() | st.sampled_from([("read_file",), ("claude-flow__memory_*",), ("*",)]),
    agent=st.none()
    | st.sampled_from([("*",), ("read_file",), ("read_file", SEARCH_TOOL_NAME), ("claude-flow__*", SEARCH_TOOL_NAME)]),
    hidden=st.sampled_from([(), ("vault",), ("claude-flow", "vault")]),
)
async def test_search_tools_runs_exactly_when_the_turn_lists_it(
    registry: ToolRegistry, skill: tuple[str, ...] | None, agent: tuple[str, ...] | None, hidden: tuple[str, ...]
) -> None:
    discovery = offering(registry, unsearchable=lambda: hidden)
    scope = discovery.scope_for_turn(
        TurnScope(agent_allowed=agent, skill_allowed=skill or (), skill="s" if skill else None)
    )
    listed = SEARCH_TOOL_NAME in {schema["name"] for schema in registry.schemas_for_tools(scope)}
    try:
        await registry.execute(SEARCH_TOOL_NAME, {"query": "memory"}, scope, discovery=discovery)
        ran = True
    except PermissionDenied:
        ran = False
    assert ran == listed
