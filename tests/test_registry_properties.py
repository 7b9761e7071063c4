"""Property tests: what the model was not shown it cannot call; aliases are unique and round-trip."""

from __future__ import annotations

import re

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from local_tools import RecordingTool

from toolsift import InvalidArguments, InvalidToolName, PermissionDenied
from toolsift.registry import ToolRegistry, TurnScope, validate_tool_name

SERVERS = ["alpha", "beta", "claude-flow"]
TOOL_PARTS = ["memory_store", "memory_get", "swarm_init", "read", "x.y", "a/b"]
BUILTINS = ["read_file", "write_file", "search"]
ALL_NAMES = BUILTINS + [f"{s}__{t}" for s in SERVERS for t in TOOL_PARTS]

pattern_piece = st.sampled_from(["*", "?", "alpha", "beta", "claude-flow", "__", "memory_", "read", "_", "x", "."])
patterns = st.lists(st.lists(pattern_piece, min_size=1, max_size=4).map("".join), max_size=3)


@st.composite
def registries(draw: st.DrawFn) -> ToolRegistry:
    registry = ToolRegistry()
    internal = draw(st.sets(st.sampled_from(SERVERS)))
    for server in SERVERS:
        tools = draw(st.sets(st.sampled_from(TOOL_PARTS), max_size=4))
        registry.replace_server(server, [RecordingTool(f"{server}__{t}", read_only=t.endswith("get"))
                                         for t in sorted(tools)], internal=server in internal)
    registry.register_many([RecordingTool(n, read_only=n == "read_file") for n in BUILTINS])
    return registry


scopes = st.builds(
    TurnScope,
    agent_allowed=st.one_of(st.none(), patterns),
    skill_allowed=patterns,
    skill_disallowed=patterns,
    read_only=st.booleans(),
    unlocked=st.frozensets(st.sampled_from(ALL_NAMES), max_size=3),
)


async def _try(registry: ToolRegistry, name: str, scope: TurnScope) -> bool:
    try:
        await registry.execute(name, {}, scope)
    except PermissionDenied as exc:
        assert exc.layer in (1, 3, 4)
        return False
    except InvalidArguments:  # pragma: no cover - the tools accept {}
        raise
    return True


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(registry=registries(), scope=scopes, fmt=st.sampled_from(["mcp", "openai", "gemini"]))
def test_execute_runs_exactly_the_tools_schemas_for_tools_lists(registry: ToolRegistry, scope: TurnScope,
                                                                  fmt: str) -> None:
    listed = {registry.resolve(s.get("name") or s["function"]["name"])
              for s in registry.schemas_for_tools(scope, fmt)}
    for tool in registry:
        name = tool.spec.name
        ran = anyio.run(_try, registry, registry.exported_name(name, fmt), scope)
        assert ran == (name in listed), name


tool_names = st.builds(
    lambda server, part: f"{server}__{part}" if server else part,
    st.sampled_from(["", "a", "b-c", "svc", "Z9"]),
    st.text(st.sampled_from("abcXYZ019_-./"), min_size=1, max_size=90),
)

def is_valid(name: str) -> bool:
    try:
        validate_tool_name(name)
    except InvalidToolName:
        return False
    return True


RULES = {"openai": re.compile(r"[a-zA-Z0-9_-]{1,64}"), "anthropic": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
         "gemini": re.compile(r"[a-zA-Z_][a-zA-Z0-9_.-]{0,63}")}


@settings(max_examples=200)
@given(names=st.sets(tool_names.filter(is_valid), min_size=1, max_size=30))
def test_aliases_are_unique_valid_and_round_trip(names: set[str]) -> None:
    registry = ToolRegistry()
    registry.register_many([RecordingTool(n) for n in sorted(names)])
    for fmt, rule in RULES.items():
        exported = [registry.exported_name(n, fmt) for n in sorted(names)]
        assert len(set(exported)) == len(exported)
        for canonical, name in zip(sorted(names), exported, strict=True):
            assert rule.fullmatch(name), name
            assert registry.resolve(name) == canonical
            if rule.fullmatch(canonical):
                assert name == canonical
