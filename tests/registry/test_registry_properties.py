"""Property tests: what the model was not shown it cannot call, and what the caller can never call it is not shown;
aliases are unique and round-trip."""

from __future__ import annotations

import os
import re

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from local_tools import RecordingTool

from toolsift import InvalidToolName, PermissionDenied
from toolsift._names import validate_tool_name
from toolsift.registry import Level, Permissions, ToolRegistry, TurnScope

SERVERS = ["alpha", "beta", "claude-flow", "cf"]
# Parts include names that need provider aliases ('.', '/', over 64 characters once namespaced).
TOOL_PARTS = ["memory_store", "memory_get", "swarm_init", "embeddings_search", "read", "x.y", "a/b", "q" * 70]
BUILTINS = ["read_file", "write_file", "search", "search_tools"]
ALL_NAMES = BUILTINS + [f"{s}__{t}" for s in SERVERS for t in TOOL_PARTS]
# 500 random scopes per run (each run draws new ones); TOOLSIFT_PROPERTY_EXAMPLES=5000 for a deeper search.
EXAMPLES = int(os.environ.get("TOOLSIFT_PROPERTY_EXAMPLES", "500"))

glob_piece = st.sampled_from(["*", "?", "memory_", "store", "search", "_search", "read", "_", "x", ".", "a/b", "q"])
glob_tail = st.lists(glob_piece, min_size=1, max_size=3).map("".join)
# A pattern that names a server literally ('cf__memory_*'), a bare wildcard ('*_search', '*'),
# a wildcard before the separator ('c?__*', '*__read') or an exact name.
literal_server_pattern = st.builds(lambda s, t: f"{s}__{t}", st.sampled_from(SERVERS), glob_tail)
bare_pattern = st.one_of(st.sampled_from(["*", "*_search", "*memory*", "*__*", "?"]), glob_tail)
wild_server_pattern = st.builds(lambda s, t: f"{s}__{t}", st.sampled_from(["*", "c?", "?lpha", "be*", "*f"]), glob_tail)
exact_pattern = st.sampled_from(ALL_NAMES)
pattern = st.one_of(literal_server_pattern, bare_pattern, wild_server_pattern, exact_pattern)
patterns = st.lists(pattern, max_size=4)


def _registry(internal: set[str], names: set[str]) -> ToolRegistry:
    registry = ToolRegistry()
    for server in SERVERS:
        tools = [
            RecordingTool(
                n, read_only=n.endswith(("get", "search")), level=Level.EXECUTE if n.endswith("init") else None
            )
            for n in sorted(names)
            if n.startswith(f"{server}__")
        ]
        registry.replace_server(server, tools, internal=server in internal)
    registry.register_many([RecordingTool(n, read_only=n == "read_file") for n in BUILTINS])
    return registry


registries = st.builds(
    _registry, st.sets(st.sampled_from(SERVERS)), st.sets(st.sampled_from(ALL_NAMES[len(BUILTINS) :]), max_size=16)
)


# The caller's layer-5 permissions, as a conversation puts them in its scope (None: a scope that does not ask).
permissions = st.one_of(
    st.none(),
    st.builds(
        Permissions,
        level=st.sampled_from(list(Level)),
        denylist=st.lists(pattern, max_size=2),
        allowlist=st.one_of(st.none(), st.lists(pattern, max_size=3)),
    ),
)

UNLIMITED = Permissions(level=Level.ADMIN)

scopes = st.builds(
    TurnScope,
    permissions=permissions,
    agent_allowed=st.one_of(st.none(), patterns),
    skill_allowed=patterns,
    skill_disallowed=st.one_of(st.just([]), patterns),
    read_only=st.booleans(),
    unlocked=st.frozensets(st.sampled_from(ALL_NAMES), max_size=3),
    pinned=st.frozensets(st.sampled_from(ALL_NAMES), max_size=3),
)


def _glob(patterns: tuple[str, ...], name: str) -> bool:
    """fnmatch-style glob, written independently of toolsift's matcher: '*' and '?' only."""
    return any(
        re.fullmatch("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in p), name, re.DOTALL)
        for p in patterns
    )


def expected_visible(
    name: str, internal: bool, read_only: bool, scope: TurnScope, level: Level, names: tuple[str, ...] = ()
) -> bool:
    """DESIGN.md's layers 1, 3 and 4, and layer 5 where it needs no arguments, restated from the prose.

    ``names`` are every name permission globs match the tool by (``builtin__read_file`` too).
    """
    pinned = name in scope.pinned
    if internal and not pinned and name not in scope.unlocked:
        server = name.split("__", 1)[0]
        naming = tuple(
            p for p in scope.skill_allowed if p.startswith(f"{server}__") and "*" not in server and "?" not in server
        )
        if not _glob(naming, name):
            return False
    if scope.agent_allowed is not None and not _glob(scope.agent_allowed, name):
        return False
    if scope.skill_allowed and not pinned and not _glob(scope.skill_allowed, name):
        return False
    if _glob(scope.skill_disallowed, name):
        return False
    if scope.read_only and not read_only:
        return False
    return scope.permissions is None or callable_by(scope.permissions, names or (name,), level)


def callable_by(permissions: Permissions, names: tuple[str, ...], level: Level) -> bool:
    """Layer 5 without arguments: the denylist, the allowlist and the level."""
    if any(_glob(permissions.denylist, name) for name in names):
        return False
    if permissions.allowlist is not None and not any(_glob(permissions.allowlist, name) for name in names):
        return False
    return permissions.level >= level


async def _ran(registry: ToolRegistry, names: list[str], scope: TurnScope) -> dict[str, bool]:
    ran = {}
    for name in names:
        try:
            # A scope without permissions lists without asking them: its caller is one they never refuse.
            await registry.execute(name, {}, scope, permissions=scope.permissions or UNLIMITED)
        except PermissionDenied as exc:
            assert exc.layer in (1, 3, 4, 5)
            ran[name] = False
        else:
            ran[name] = True
    return ran


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(registry=registries, scope=scopes, fmt=st.sampled_from(["mcp", "openai", "gemini"]))
def test_execute_runs_exactly_the_tools_schemas_for_tools_lists(
    registry: ToolRegistry, scope: TurnScope, fmt: str
) -> None:
    listed = {registry.resolve(s.get("name") or s["function"]["name"]) for s in registry.schemas_for_tools(scope, fmt)}
    for tool in registry:
        spec = tool.spec
        assert (spec.name in listed) == expected_visible(
            spec.name,
            registry.is_internal(spec.name),
            spec.read_only,
            scope,
            spec.required_level,
            registry.names(spec.name),
        ), spec.name
    # Called by the name the model saw (an alias where the canonical name breaks the format's rule).
    exported = {registry.exported_name(t.spec.name, fmt): t.spec.name for t in registry}
    ran = anyio.run(_ran, registry, list(exported), scope)
    assert {exported[name] for name, ok in ran.items() if ok} == listed


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


RULES = {
    "openai": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "anthropic": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "gemini": re.compile(r"[a-zA-Z_][a-zA-Z0-9_.-]{0,63}"),
}


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
