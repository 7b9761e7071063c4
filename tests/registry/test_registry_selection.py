"""Property tests: the indexed, per-namespace cached selection equals a plain filter of the catalogue."""

from __future__ import annotations

from collections.abc import Iterable
from unittest.mock import patch

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from local_tools import RecordingTool
from test_registry_properties import ALL_NAMES, BUILTINS, EXAMPLES, SERVERS, expected_visible, scopes

from toolsift.registry import ToolRegistry, TurnScope, _selection
from toolsift.registry._name_index import NameIndex

SERVER_NAMES = ALL_NAMES[len(BUILTINS) :]


def _plain_filter(registry: ToolRegistry, scope: TurnScope) -> list[str]:
    """Every registered tool, in registration order, kept where DESIGN's layers 1-4 (and 5, asked) keep it."""
    return [
        t.spec.name
        for t in registry
        if expected_visible(
            t.spec.name,
            registry.is_internal(t.spec.name),
            t.spec.read_only,
            scope,
            t.spec.required_level,
            registry.names(t.spec.name),
        )
    ]


def _listed(registry: ToolRegistry, scope: TurnScope) -> list[str]:
    return [registry.resolve(s["name"]) for s in registry.schemas_for_tools(scope, "mcp")]


@st.composite
def interleaved_registries(draw: st.DrawFn) -> ToolRegistry:
    """Tools registered one by one in a random order, so namespaces interleave in registration order.

    Most servers are internal or global as a whole; a server drawn as mixed has its tools flagged one by one.
    """
    names = draw(st.lists(st.sampled_from(ALL_NAMES), unique=True, max_size=24))
    internal = draw(st.sets(st.sampled_from(SERVERS)))
    mixed = draw(st.sets(st.sampled_from(SERVERS), max_size=2))
    registry = ToolRegistry()
    for name in names:
        server = name.partition("__")[0] if "__" in name else None
        flagged = draw(st.booleans()) if server in mixed else server in internal
        registry.register(RecordingTool(name, read_only=name.endswith(("get", "search"))), internal=flagged)
    return registry


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(registry=interleaved_registries(), scope=scopes)
def test_indexed_selection_equals_a_plain_filter(registry: ToolRegistry, scope: TurnScope) -> None:
    expected = _plain_filter(registry, scope)
    assert [t.spec.name for t in registry.visible_tools(scope)] == expected
    assert _listed(registry, scope) == expected


replacement = st.tuples(st.sampled_from(SERVERS), st.sets(st.sampled_from(SERVER_NAMES), max_size=8), st.booleans())


@settings(max_examples=max(EXAMPLES // 4, 50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scope_list=st.lists(scopes, min_size=1, max_size=4), steps=st.lists(replacement, min_size=1, max_size=8))
def test_cached_selections_equal_fresh_ones_after_server_replacements(
    scope_list: list[TurnScope], steps: list[tuple[str, set[str], bool]]
) -> None:
    registry = ToolRegistry()
    registry.register_many([RecordingTool(n, read_only=n == "read_file") for n in BUILTINS])
    for server, names, internal in steps:
        for scope in scope_list:  # warm every cache before the change
            _listed(registry, scope)
        tools = [RecordingTool(n, read_only=n.endswith("get")) for n in sorted(names) if n.startswith(f"{server}__")]
        registry.replace_server(server, tools, internal=internal)
        for scope in scope_list:
            assert _listed(registry, scope) == _plain_filter(registry, scope)


@settings(max_examples=max(EXAMPLES // 4, 50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scope_list=st.lists(scopes, min_size=1, max_size=4), steps=st.lists(replacement, min_size=1, max_size=8))
def test_bare_globs_matched_on_every_namespace_at_once_select_the_same(
    scope_list: list[TurnScope], steps: list[tuple[str, set[str], bool]]
) -> None:
    # Every bare glob goes through the joint index, which each change to a global namespace must drop.
    with patch.object(_selection, "_JOINTLY", 1):
        test_cached_selections_equal_fresh_ones_after_server_replacements.hypothesis.inner_test(scope_list, steps)


def test_shares_kept_per_namespace_are_bounded_and_the_oldest_is_recomputed() -> None:
    registry = ToolRegistry()
    registry.replace_server(
        "alpha", [RecordingTool("alpha__memory_store"), RecordingTool("alpha__read")], internal=False
    )
    first = TurnScope(skill_allowed=("alpha__memory_*",))
    assert _listed(registry, first) == ["alpha__memory_store"]
    for index in range(300):
        registry.schemas_for_tools(TurnScope(skill_allowed=(f"alpha__r{'?' * (index % 3)}*", f"x{index}")))
    assert len(registry._selection._shares["alpha"]) == 256
    registry._selection._lists.clear()  # the kept schema lists would answer before the evicted share is needed
    assert _listed(registry, first) == ["alpha__memory_store"]


def test_bare_globs_are_matched_on_global_names_only_and_internal_changes_keep_that_index() -> None:
    # A bare glob never surfaces an internal tool, so its index leaves them out, even beside global ones.
    registry = ToolRegistry()
    for server in range(4):
        registry.replace_server(f"s{server}", [RecordingTool(f"s{server}__memory_search")], internal=server % 2 == 1)
    registry.register(RecordingTool("s0__secret_search"), internal=True)
    builds: list[list[str]] = []
    real_index = _selection.NameIndex

    def recording_index(names: Iterable[str]) -> NameIndex:
        builds.append(sorted(names))
        return real_index(builds[-1])

    with patch.object(_selection, "NameIndex", recording_index), patch.object(_selection, "_JOINTLY", 1):
        assert _listed(registry, TurnScope(skill_allowed=("*_search",))) == ["s0__memory_search", "s2__memory_search"]
        assert builds == [["s0__memory_search", "s2__memory_search"]]
        registry.unregister("s0__secret_search")
        registry.register(RecordingTool("s0__secret_search"), internal=True)
        assert _listed(registry, TurnScope(skill_allowed=("*_search", "s0__secret*"))) == [
            "s0__memory_search",
            "s2__memory_search",
            "s0__secret_search",
        ]
        assert len(builds) == 1  # internal changes left the joint index as it was
        registry.replace_server("s2", [RecordingTool("s2__new_search")], internal=False)
        assert _listed(registry, TurnScope(skill_allowed=("*_search",))) == ["s0__memory_search", "s2__new_search"]
        assert builds[-1] == ["s0__memory_search", "s2__new_search"]
