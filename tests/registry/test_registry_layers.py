"""The five layers: each layer's allow and deny paths, for listing and for calling."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from local_tools import RecordingTool

from toolsift import InvalidPattern, PermissionDenied, ToolNotFound
from toolsift.registry import Level, Permissions, ToolRegistry, ToolRule, ToolSpec, TurnScope


def names(registry: ToolRegistry, scope: TurnScope | None = None) -> list[str]:
    return [t.spec.name for t in registry.visible_tools(scope)]


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_many([RecordingTool("read_file", read_only=True), RecordingTool("write_file")])
    registry.replace_server(
        "general", [RecordingTool("general__echo", read_only=True), RecordingTool("general__add")], internal=False
    )
    registry.replace_server(
        "claude-flow",
        [
            RecordingTool("claude-flow__memory_store"),
            RecordingTool("claude-flow__memory_search", read_only=True),
            RecordingTool("claude-flow__swarm_init"),
        ],
        internal=True,
    )
    return registry


GLOBAL = ["read_file", "write_file", "general__echo", "general__add"]


def test_no_skill_sees_global_tools_only(registry: ToolRegistry) -> None:
    assert names(registry) == GLOBAL


@pytest.mark.parametrize("pattern", ["*", "*_store", "claude-*__memory_*", "*__memory_store", "claude-flo?__*"])
def test_wildcard_before_the_server_never_surfaces_internal_tools(registry: ToolRegistry, pattern: str) -> None:
    visible = names(registry, TurnScope(skill_allowed=[pattern]))
    assert not any(n.startswith("claude-flow__") for n in visible)


def test_literal_server_pattern_surfaces_only_matching_internal_tools(registry: ToolRegistry) -> None:
    scope = TurnScope(skill_allowed=["claude-flow__memory_*"], skill="flow-memory")
    assert names(registry, scope) == ["claude-flow__memory_store", "claude-flow__memory_search"]


def test_skill_patterns_combine_global_and_surfaced_tools(registry: ToolRegistry) -> None:
    scope = TurnScope(skill_allowed=["read_file", "general__*", "claude-flow__swarm_init"])
    assert names(registry, scope) == ["read_file", "general__echo", "general__add", "claude-flow__swarm_init"]


def test_agent_allowlist_limits_every_turn(registry: ToolRegistry) -> None:
    scope = TurnScope(agent_allowed=["*_file", "claude-flow__*"], skill_allowed=["claude-flow__memory_*", "read_file"])
    assert names(registry, scope) == ["read_file", "claude-flow__memory_store", "claude-flow__memory_search"]
    assert names(registry, TurnScope(agent_allowed=["general__*"])) == ["general__echo", "general__add"]


def test_agent_allowlist_alone_never_surfaces_internal_tools(registry: ToolRegistry) -> None:
    assert names(registry, TurnScope(agent_allowed=["claude-flow__*"])) == []


def test_empty_agent_allowlist_allows_nothing(registry: ToolRegistry) -> None:
    assert names(registry, TurnScope(agent_allowed=[])) == []


def test_disallowed_tools_are_removed_even_when_allowed(registry: ToolRegistry) -> None:
    scope = TurnScope(skill_allowed=["claude-flow__memory_*"], skill_disallowed=["*_store"])
    assert names(registry, scope) == ["claude-flow__memory_search"]


def test_plan_mode_keeps_read_only_tools(registry: ToolRegistry) -> None:
    assert names(registry, TurnScope(read_only=True)) == ["read_file", "general__echo"]


def test_unlocked_names_surface_internal_tools_within_the_agent_limit(registry: ToolRegistry) -> None:
    scope = TurnScope(unlocked=frozenset({"claude-flow__swarm_init", "missing__tool"}))
    assert names(registry, scope) == [*GLOBAL, "claude-flow__swarm_init"]
    limited = TurnScope(agent_allowed=["general__*"], unlocked=frozenset({"claude-flow__swarm_init"}))
    assert names(registry, limited) == ["general__echo", "general__add"]
    assert TurnScope().with_unlocked(["x"]).unlocked == {"x"}


def test_scope_rejects_invalid_patterns_naming_their_origin() -> None:
    with pytest.raises(InvalidPattern, match="skill 'broken' allowed-tools"):
        TurnScope(skill_allowed=["bad pattern"], skill="broken")
    with pytest.raises(InvalidPattern, match="agent 'ops' allowed_tools"):
        TurnScope(agent_allowed=["x[1]"], agent="ops")


# -- execute: layers 1-4 re-checked -----------------------------------------------------------


async def test_execute_runs_a_visible_tool(registry: ToolRegistry) -> None:
    result = await registry.execute("general__echo", {"text": "hi"})
    assert not result.is_error and result.text_content() == "general__echo [('text', 'hi')]"


async def test_execute_unknown_tool_is_layer_2(registry: ToolRegistry) -> None:
    with pytest.raises(ToolNotFound, match="'nope'"):
        await registry.execute("nope", {})


@pytest.mark.parametrize(
    ("tool", "scope", "layer", "reason"),
    [
        ("claude-flow__swarm_init", TurnScope(), 1, "internal"),
        ("claude-flow__swarm_init", TurnScope(skill_allowed=["*"]), 1, "names it literally"),
        ("write_file", TurnScope(agent_allowed=["read_*"], agent="reader"), 3, "agent 'reader' allowed_tools"),
        ("write_file", TurnScope(skill_allowed=["read_*"], skill="look"), 4, "skill 'look' allowed-tools"),
        (
            "claude-flow__memory_store",
            TurnScope(skill_allowed=["claude-flow__*"], skill_disallowed=["*_store"]),
            4,
            "disallowed-tools",
        ),
        ("write_file", TurnScope(read_only=True), 4, "plan mode"),
    ],
)
async def test_execute_denies_what_the_scope_hides(
    registry: ToolRegistry, tool: str, scope: TurnScope, layer: int, reason: str
) -> None:
    with pytest.raises(PermissionDenied, match=reason) as info:
        await registry.execute(tool, {}, scope)
    assert info.value.layer == layer and info.value.tool == tool
    assert registry.get(tool).calls == []  # type: ignore[attr-defined]


# -- layer 5 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("permissions", "reason"),
    [
        (Permissions(denylist=("general__*",)), "denylist"),
        (Permissions(allowlist=("read_*",)), "allowlist"),
        (Permissions(level=Level.READ), "requires level write, the caller has read"),
    ],
)
async def test_layer_5_denials(registry: ToolRegistry, permissions: Permissions, reason: str) -> None:
    with pytest.raises(PermissionDenied, match=reason) as info:
        await registry.execute("general__add", {}, permissions=permissions)
    assert info.value.layer == 5


async def test_layer_5_allows_when_every_check_passes(registry: ToolRegistry) -> None:
    permissions = Permissions(level="read", allowlist=("general__*",), denylist=("write_*",))
    result = await registry.execute("general__echo", {}, permissions=permissions)
    assert not result.is_error


async def test_denylist_wins_over_allowlist(registry: ToolRegistry) -> None:
    permissions = Permissions(allowlist=("general__*",), denylist=("general__echo",))
    with pytest.raises(PermissionDenied, match="denylist"):
        await registry.execute("general__echo", {}, permissions=permissions)


async def test_custom_permissions_are_required() -> None:
    registry = ToolRegistry()
    registry.register(RecordingTool("wipe", permissions=frozenset({"memory.delete"})))
    with pytest.raises(PermissionDenied, match="requires permission\\(s\\) memory.delete"):
        await registry.execute("wipe", {})
    result = await registry.execute("wipe", {}, permissions=Permissions(custom=frozenset({"memory.delete"})))
    assert not result.is_error


async def test_config_rules_raise_what_matching_tools_require() -> None:
    rules = [ToolRule(match="flow__*_delete", required_level=Level.ADMIN, required_permissions=frozenset({"rm"}))]
    registry = ToolRegistry(rules=rules)
    registry.register_many([RecordingTool("flow__memory_delete"), RecordingTool("flow__memory_get")])
    assert registry.get("flow__memory_delete").spec.required_level == Level.WRITE  # the tool object is untouched
    with pytest.raises(PermissionDenied, match="requires level admin"):
        await registry.execute("flow__memory_delete", {})
    admin = Permissions(level=Level.ADMIN, custom=frozenset({"rm"}))
    assert not (await registry.execute("flow__memory_delete", {}, permissions=admin)).is_error
    assert not (await registry.execute("flow__memory_get", {})).is_error


def test_tool_rule_rejects_bad_globs() -> None:
    with pytest.raises(InvalidPattern, match="tools.permissions match"):
        ToolRule(match="a b")


def test_permissions_reject_bad_levels_and_globs() -> None:
    with pytest.raises(ValueError, match="Unknown permission level 'root'; expected one of read, write"):
        Permissions(level="root")  # type: ignore[arg-type]
    with pytest.raises(InvalidPattern, match="permissions denylist"):
        Permissions(denylist=("a{b}",))
    with pytest.raises(InvalidPattern, match="permissions allowlist"):
        Permissions(allowlist=("a[b]",))


class NoWritesOnFridays:
    """A custom layer-5 check."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def check(self, spec: ToolSpec, args: Mapping[str, Any], permissions: Permissions) -> str | None:
        self.seen.append(spec.name)
        return "argument 'text' must not say friday" if args.get("text") == "friday" else None


async def test_custom_permission_layer_runs_last(registry: ToolRegistry) -> None:
    layer = NoWritesOnFridays()
    registry.add_permission_layer(layer)
    assert not (await registry.execute("general__echo", {"text": "monday"})).is_error
    with pytest.raises(PermissionDenied, match="must not say friday"):
        await registry.execute("general__echo", {"text": "friday"})
    with pytest.raises(PermissionDenied, match="denylist"):
        await registry.execute("general__echo", {"text": "x"}, permissions=Permissions(denylist=("*",)))
    assert layer.seen == ["general__echo", "general__echo"]


async def test_permission_layers_are_frozen_once_the_registry_started(registry: ToolRegistry) -> None:
    registry.schemas_for_tools()
    with pytest.raises(RuntimeError, match="Cannot add a permission layer after the registry has started"):
        registry.add_permission_layer(NoWritesOnFridays())


def test_level_parse_accepts_names_numbers_and_levels() -> None:
    assert Level.parse("Admin") is Level.ADMIN
    assert Level.parse(20) is Level.WRITE
    assert Level.parse(Level.READ) is Level.READ
    assert str(Level.EXECUTE) == "execute"
    with pytest.raises(ValueError, match="Unknown permission level True"):
        Level.parse(True)


# -- the scope escape: a bare wildcard beside a pattern naming the server literally --------------------------------

ESCAPES = [
    # (skill allowed-tools, the hidden internal tool a model might call anyway)
    (["claude-flow__memory_store", "*_search"], "claude-flow__memory_search"),
    (["claude-flow__memory_*", "*"], "claude-flow__swarm_init"),
    (["*", "claude-flow__memory_*"], "claude-flow__swarm_init"),
    (["claude-flow__memory_store", "*__swarm_init"], "claude-flow__swarm_init"),
    (["claude-flow__memory_store", "?????????????__swarm_init"], "claude-flow__swarm_init"),
]


@pytest.mark.parametrize(("allowed", "hidden"), ESCAPES)
async def test_bare_wildcard_beside_a_literal_server_pattern_neither_lists_nor_runs_other_internal_tools(
    registry: ToolRegistry, allowed: list[str], hidden: str
) -> None:
    scope = TurnScope(skill_allowed=allowed, skill="mem")
    listed = names(registry, scope)
    assert hidden not in listed
    assert [s["name"] for s in registry.schemas_for_tools(scope)] == listed
    with pytest.raises(PermissionDenied, match="internal") as info:
        await registry.execute(hidden, {}, scope)
    assert info.value.layer == 1
    assert registry.get(hidden).calls == []  # type: ignore[attr-defined]


async def test_literal_server_pattern_still_surfaces_what_it_matches(registry: ToolRegistry) -> None:
    scope = TurnScope(skill_allowed=["claude-flow__memory_*", "*"], skill="mem")
    assert names(registry, scope) == [
        *GLOBAL[:2],
        "general__echo",
        "general__add",
        "claude-flow__memory_store",
        "claude-flow__memory_search",
    ]
    result = await registry.execute("claude-flow__memory_search", {}, scope)
    assert not result.is_error


async def test_pinned_tools_stay_in_a_skill_turn_unless_the_skill_disallows_them(registry: ToolRegistry) -> None:
    scope = TurnScope(skill_allowed=["general__echo"], skill="narrow", pinned=frozenset({"claude-flow__swarm_init"}))
    assert names(registry, scope) == ["general__echo", "claude-flow__swarm_init"]
    assert not (await registry.execute("claude-flow__swarm_init", {}, scope)).is_error
    excluded = TurnScope(
        skill_allowed=["general__echo"],
        skill_disallowed=["*__swarm_*"],
        skill="narrow",
        pinned=frozenset({"claude-flow__swarm_init"}),
    )
    assert names(registry, excluded) == ["general__echo"]
    with pytest.raises(PermissionDenied, match="disallowed-tools"):
        await registry.execute("claude-flow__swarm_init", {}, excluded)
    agent_bound = TurnScope(agent_allowed=["general__*"], pinned=frozenset({"claude-flow__swarm_init"}))
    with pytest.raises(PermissionDenied) as info:
        await registry.execute("claude-flow__swarm_init", {}, agent_bound)
    assert info.value.layer == 3
