"""``search_tools`` and ``Discovery``: what is listed, what is unlocked, and the five layers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from local_tools import RecordingTool
from test_search_ranking import corpus_registry

from toolsift import PermissionDenied
from toolsift._names import SEARCH_TOOL_NAME
from toolsift.registry import CallRecord, Level, Permissions, ToolRegistry, ToolResult, TurnScope
from toolsift.search import Discovery, SearchIndex, SearchToolsTool
from toolsift.skills import SkillsLoader

ROOT = Path(__file__).resolve().parents[2]
F = "claude-flow__"
SEARCH = "search_tools"


@pytest.fixture
def registry() -> ToolRegistry:
    """Builtin tools, the internal flow server, and an internal ``vault`` server marked not searchable."""
    registry = corpus_registry()
    registry.register_many(
        [
            RecordingTool("read_file", read_only=True, description="Read a text file."),
            RecordingTool("write_file", description="Write a text file."),
        ]
    )
    registry.replace_server(
        "vault",
        [RecordingTool("vault__read_secret", read_only=True, description="Read a secret value from the vault.")],
        internal=True,
    )
    return registry


@pytest.fixture
def index(registry: ToolRegistry) -> SearchIndex:
    skills = SkillsLoader(project=ROOT / "examples" / "skills").load()
    index = SearchIndex(registry, skills, unsearchable={"vault"})
    registry.register(SearchToolsTool(index))
    return index


async def search(
    registry: ToolRegistry,
    query: str,
    scope: TurnScope | None = None,
    permissions: Permissions | None = None,
    discovery: Discovery | None = None,
    **args: Any,
) -> dict[str, Any]:
    result = await registry.execute(SEARCH, {"query": query, **args}, scope, permissions, discovery=discovery)
    assert not result.is_error, result.text_content()
    payload = json.loads(result.text_content())
    assert payload == result.structured_content
    return payload


def listed(payload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in payload["tools"]}


async def test_search_tools_unlocks_matches_into_the_next_scope(registry: ToolRegistry, index: SearchIndex) -> None:
    discovery = Discovery(registry)
    scope = discovery.scope_for_turn(TurnScope())
    assert F + "memory_store" not in {t.spec.name for t in registry.visible_tools(scope)}
    with pytest.raises(PermissionDenied, match="layer 1"):
        await registry.execute(F + "memory_store", {}, scope)
    payload = await search(registry, "store a value in memory", scope, discovery=discovery, max=3)
    entry = listed(payload)[F + "memory_store"]
    assert entry == {
        "name": F + "memory_store",
        "server": "claude-flow",
        "description": entry["description"],
        "callable": True,
        "granted_by": ["flow-memory"],
    }
    assert entry["description"].startswith("Store a value in persistent memory")
    assert F + "memory_store" in payload["unlocked"] and set(payload["unlocked"]) == discovery.unlocked
    assert "next step" in payload["note"]
    assert payload["skills"][0]["name"] == "flow-memory"
    assert payload["skills"][0]["use"].startswith("/use flow-memory")
    next_scope = discovery.scope_for_turn(TurnScope())
    names = [schema["function"]["name"] for schema in registry.schemas_for_tools(next_scope, "openai")]
    assert F + "memory_store" in names and "read_file" in names and SEARCH in names
    result = await registry.execute(F + "memory_store", {"key": "k", "value": "v"}, next_scope)
    assert not result.is_error


async def test_search_tools_never_lists_tools_outside_the_agent_allowlist(
    registry: ToolRegistry, index: SearchIndex
) -> None:
    discovery = Discovery(registry)
    scope = discovery.scope_for_turn(TurnScope(agent_allowed=(SEARCH, "claude-flow__memory_*"), agent="a"))
    payload = await search(
        registry, "start a new swarm of agents, or store a value in memory", scope, discovery=discovery, max=25
    )
    assert payload["tools"] and all(name.startswith(F + "memory_") for name in listed(payload))
    assert all(name.startswith(F + "memory_") for name in discovery.unlocked)
    # An exact name outside layer 3 is not found either.
    assert F + "swarm_init" not in listed(await search(registry, F + "swarm_init", scope, discovery=discovery))


async def test_search_tools_lists_but_does_not_unlock_what_the_active_skill_excludes(
    registry: ToolRegistry, index: SearchIndex
) -> None:
    discovery = Discovery(registry)
    scope = discovery.scope_for_turn(TurnScope(skill_allowed=("claude-flow__memory_*", SEARCH), skill="flow-memory"))
    payload = await search(registry, "initialize a new agent swarm with a topology", scope, discovery=discovery, max=3)
    entry = listed(payload)[F + "swarm_init"]
    assert entry["callable"] is False
    assert entry["reason"] == "layer 4: not in skill 'flow-memory' allowed-tools"
    assert entry["granted_by"] == ["flow-swarm"]
    assert F + "swarm_init" not in discovery.unlocked
    assert "unlocked" not in payload and payload["note"].startswith("No new tools were unlocked. ")
    # The note says what the model can do about it: nothing but tell the user, who can /use the skill.
    assert "callable: false is not allowed in this conversation's scope now" in payload["note"]
    assert "Only the user can change that (by /use of a skill its granted_by names)" in payload["note"]


async def test_search_tools_lists_but_does_not_unlock_what_permissions_refuse(
    registry: ToolRegistry, index: SearchIndex
) -> None:
    discovery = Discovery(registry)
    permissions = Permissions(level=Level.WRITE, denylist=("claude-flow__memory_delete",))
    payload = await search(
        registry,
        "delete or retrieve a memory entry",
        discovery.scope_for_turn(TurnScope()),
        permissions,
        discovery=discovery,
        max=5,
    )
    tools = listed(payload)
    assert tools[F + "memory_delete"]["callable"] is False
    assert tools[F + "memory_delete"]["reason"] == "layer 5: it matches the caller's denylist"
    assert tools[F + "memory_retrieve"]["callable"] is True
    assert F + "memory_delete" not in discovery.unlocked and F + "memory_retrieve" in discovery.unlocked
    # A read-only caller may search, but tools that need more than `read` stay locked.
    reader = Permissions(level=Level.READ)
    payload = await search(registry, "store a value in memory", TurnScope(), reader, discovery=discovery, max=1)
    assert listed(payload)[F + "memory_store"]["reason"] == "layer 5: it requires level write, the caller has read"


async def test_the_best_callable_hit_is_unlocked_when_the_best_hit_is_refused(
    registry: ToolRegistry, index: SearchIndex
) -> None:
    query = "delete a memory entry"
    first, second = [
        entry["name"] for entry in (await search(registry, query, discovery=Discovery(registry), max=2))["tools"]
    ]
    discovery = Discovery(registry)
    payload = await search(registry, query, permissions=Permissions(denylist=(first,)), discovery=discovery, max=2)
    assert [entry["callable"] for entry in payload["tools"]] == [False, True]
    assert payload["unlocked"] == [second] and discovery.unlocked == {second}


async def test_search_tools_in_plan_mode_offers_read_only_tools_only(
    registry: ToolRegistry, index: SearchIndex
) -> None:
    discovery = Discovery(registry)
    payload = await search(registry, "memory", TurnScope(read_only=True), discovery=discovery, max=25)
    for name, entry in listed(payload).items():
        assert entry["callable"] is registry.get(name).spec.read_only
    assert all(registry.get(name).spec.read_only for name in discovery.unlocked)


async def test_an_unsearchable_server_never_appears(registry: ToolRegistry, index: SearchIndex) -> None:
    discovery = Discovery(registry)
    for query in ("read a secret value from the vault", "vault__read_secret", "read_secret"):
        payload = await search(registry, query, discovery=discovery, max=25)
        assert not any(name.startswith("vault__") for name in listed(payload)), query
    assert not any(doc.server == "vault" for doc in index.documents)
    assert discovery.unlocked.isdisjoint({"vault__read_secret"})


async def test_search_tools_does_not_list_itself_and_says_when_nothing_matches(
    registry: ToolRegistry, index: SearchIndex
) -> None:
    payload = await search(registry, "search tools find skills")
    assert SEARCH not in listed(payload)
    payload = await search(registry, "xylophone")
    assert payload == {
        "tools": [],
        "skills": [],
        "note": "Nothing matches 'xylophone'; try other words, fewer words, or an exact tool name.",
    }


async def test_search_tools_without_discovery_unlocks_nothing_and_says_so(
    registry: ToolRegistry, index: SearchIndex
) -> None:
    payload = await search(registry, "store a value in memory", max=1)
    assert listed(payload)[F + "memory_store"]["callable"] is True
    assert "unlocked" not in payload
    assert payload["note"].startswith("Tool discovery is not enabled in this conversation")


async def test_search_tools_does_not_unlock_tools_already_in_scope(registry: ToolRegistry, index: SearchIndex) -> None:
    discovery = Discovery(registry)
    payload = await search(registry, "read_file", discovery=discovery)
    assert listed(payload)["read_file"]["callable"] is True
    assert discovery.unlocked == frozenset() and payload["note"] == "No new tools were unlocked."


async def test_search_tools_validates_its_arguments(registry: ToolRegistry, index: SearchIndex) -> None:
    from toolsift import InvalidArguments

    with pytest.raises(
        InvalidArguments,
        match=r"give a 'query' \(or several in 'queries'\), or the names of "
        r"listed tools to 'unlock'",
    ):
        await registry.execute(SEARCH, {})
    with pytest.raises(InvalidArguments, match="26 is greater than the maximum of 25"):
        await registry.execute(SEARCH, {"query": "x", "max": 26})


def test_search_tools_spec_is_a_read_only_meta_tool(index: SearchIndex) -> None:
    tool = SearchToolsTool(index)
    assert tool.spec.name == SEARCH_TOOL_NAME == SEARCH
    assert tool.spec.read_only and tool.spec.required_level is Level.READ and tool.spec.source == "meta"
    assert tool.spec.annotations is not None and tool.spec.annotations.read_only_hint
    assert repr(tool) == "SearchToolsTool(backend='bm25')"


def test_search_tools_rejects_bad_limits(index: SearchIndex) -> None:
    with pytest.raises(ValueError, match="need 1 <= default_max <= max_limit"):
        SearchToolsTool(index, default_max=30, max_limit=25)
    with pytest.raises(ValueError, match="skill_limit=0"):
        SearchToolsTool(index, skill_limit=0)


# -- Discovery -----------------------------------------------------------------------------------------


def test_discovery_turn_mode_forgets_at_the_next_turn_and_conversation_mode_keeps(registry: ToolRegistry) -> None:
    turn = Discovery(registry)
    assert turn.unlock([F + "memory_store", F + "memory_store"]).added == [F + "memory_store"]
    assert turn.unlock([F + "memory_store"]).added == []
    turn.begin_turn()
    assert turn.unlocked == frozenset()
    kept = Discovery(registry, mode="conversation")
    kept.unlock([F + "memory_store"])
    kept.begin_turn()
    assert kept.unlocked == {F + "memory_store"}
    kept.reset()
    assert kept.unlocked == frozenset()
    assert repr(kept) == "Discovery(mode='conversation', unlocked=[], pinned_servers=[])"


def test_discovery_rejects_an_unknown_mode(registry: ToolRegistry) -> None:
    with pytest.raises(ValueError, match="unlock mode must be one of turn, conversation, got 'forever'"):
        Discovery(registry, mode="forever")  # type: ignore[arg-type]


def test_pinned_tools_are_in_every_turn_within_layers_3_and_5(registry: ToolRegistry) -> None:
    permissions = Permissions(denylist=("claude-flow__memory_delete",))
    discovery = Discovery(
        registry,
        pinned_servers={"vault"},
        pinned_tools={F + "memory_store", F + "memory_delete", "not_registered"},
        permissions=permissions,
    )
    assert discovery.pinned() == {"vault__read_secret", F + "memory_store"}
    visible = {t.spec.name for t in registry.visible_tools(discovery.scope_for_turn(TurnScope()))}
    assert {"vault__read_secret", F + "memory_store", "read_file"} <= visible
    assert F + "memory_delete" not in visible
    limited = discovery.scope_for_turn(TurnScope(agent_allowed=("read_file", "vault__*")))
    assert {t.spec.name for t in registry.visible_tools(limited)} == {"read_file", "vault__read_secret"}
    # The pinned set follows the registry.
    registry.remove_server("vault")
    assert discovery.pinned() == {F + "memory_store"}


async def test_each_call_unlocks_into_the_discovery_it_carries(registry: ToolRegistry, index: SearchIndex) -> None:
    first, second = Discovery(registry), Discovery(registry)

    async def run(discovery: Discovery, query: str) -> None:
        handler = discovery.wrap(registry.handle)
        result: ToolResult = await handler(CallRecord(SEARCH, {"query": query, "max": 1}))
        assert not result.is_error

    async with anyio.create_task_group() as group:
        group.start_soon(run, first, "store a value in memory")
        group.start_soon(run, second, "initialize a new agent swarm")
    assert first.unlocked == {F + "memory_store"}
    assert second.unlocked == {F + "swarm_init"}
    # A call that carries no discovery unlocks into none.
    payload = await search(registry, "search for tools by keyword", max=1)
    assert "unlocked" not in payload
    assert first.unlocked == {F + "memory_store"} and second.unlocked == {F + "swarm_init"}


async def test_granted_by_leaves_out_skills_that_disallow_the_tool(registry: ToolRegistry) -> None:
    from toolsift.skills import Skill, SkillSet

    keeper = Skill(
        name="keeper",
        description="Keep memory.",
        allowed_tools=["claude-flow__memory_*"],
        disallowed_tools=["claude-flow__memory_delete"],
    )
    wide = Skill(name="wide", description="Everything global.", allowed_tools=["*"])
    free = Skill(name="free", description="No tool limit.")
    index = SearchIndex(registry, SkillSet({"keeper": keeper, "wide": wide, "free": free}))
    registry.register(SearchToolsTool(index))
    tools = listed(await search(registry, "delete or store a memory entry, write a text file", max=25))
    assert tools[F + "memory_store"]["granted_by"] == ["keeper"]  # "*" names no server: no internal tools
    assert "granted_by" not in tools[F + "memory_delete"]
    assert tools["write_file"]["granted_by"] == ["wide"]  # a skill without allowed-tools grants nothing


async def test_search_tools_without_skills_lists_tools_only(registry: ToolRegistry) -> None:
    registry.register(SearchToolsTool(SearchIndex(registry)))
    payload = await search(registry, "store a value in memory", max=1)
    assert payload["skills"] == [] and "granted_by" not in payload["tools"][0]
