"""Registration, lookup, atomic swaps, aliases and change notifications."""

from __future__ import annotations

import pytest
from local_tools import RecordingTool

from toolsift import DuplicateTool, InvalidToolName, ToolNotFound
from toolsift.registry import ToolRegistry, TurnScope
from toolsift.registry._internal import RegistryChange


def test_register_and_lookup_by_name() -> None:
    registry = ToolRegistry()
    tool = RecordingTool("read_file")
    registry.register(tool)
    assert registry.get("read_file") is tool
    assert "read_file" in registry and len(registry) == 1
    assert list(registry) == [tool]
    assert not registry.is_internal("read_file")


def test_duplicate_registration_is_refused_and_keeps_the_first() -> None:
    registry = ToolRegistry()
    first = RecordingTool("read_file")
    registry.register(first)
    with pytest.raises(DuplicateTool, match="'read_file' is already registered") as info:
        registry.register(RecordingTool("read_file"))
    assert info.value.name == "read_file"
    assert registry.get("read_file") is first


def test_register_many_registers_nothing_when_one_name_is_bad() -> None:
    registry = ToolRegistry()
    generation = registry.generation
    with pytest.raises(InvalidToolName, match="'bad name'"):
        registry.register_many([RecordingTool("good"), RecordingTool("bad name")])
    assert len(registry) == 0 and registry.generation == generation


def test_register_many_refuses_duplicates_within_the_batch() -> None:
    registry = ToolRegistry()
    with pytest.raises(DuplicateTool, match="'a'"):
        registry.register_many([RecordingTool("a"), RecordingTool("a")])
    assert len(registry) == 0


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "1-128 characters"),
        ("has space", "1-128 characters"),
        ("x" * 129, "1-128 characters"),
        ("bad server__tool", "the part before '__'"),
        ("__tool", "the part before '__'"),
        ("git__", "1-128 characters"),
    ],
)
def test_invalid_tool_names_are_rejected(name: str, message: str) -> None:
    with pytest.raises(InvalidToolName, match=message):
        ToolRegistry().register(RecordingTool(name))


def test_unknown_tool_names_the_tool_and_the_missing_server() -> None:
    registry = ToolRegistry()
    with pytest.raises(ToolNotFound, match="Unknown tool 'nope'$"):
        registry.get("nope")
    with pytest.raises(ToolNotFound, match="no server 'ghost' has registered tools"):
        registry.get("ghost__tool")


def test_unknown_tool_suggests_close_names() -> None:
    registry = ToolRegistry()
    registry.register_many(
        [
            RecordingTool("git__status"),
            RecordingTool("git__stash"),
            RecordingTool("git__add"),
            RecordingTool("time__now"),
        ]
    )
    with pytest.raises(
        ToolNotFound, match=r"^Unknown tool 'git__stats'; did you mean 'git__status' or 'git__stash'\?$"
    ):
        registry.get("git__stats")
    with pytest.raises(
        ToolNotFound, match=r"^Unknown tool 'gti__status'; did you mean 'git__status'.*; no server 'gti'"
    ):
        registry.get("gti__status")
    with pytest.raises(ToolNotFound, match=r"^Unknown tool 'weather'$"):
        registry.get("weather")


def test_unregister_removes_and_returns_the_tool() -> None:
    registry = ToolRegistry()
    tool = RecordingTool("a")
    registry.register(tool)
    assert registry.unregister("a") is tool
    assert "a" not in registry
    with pytest.raises(ToolNotFound, match="'a'"):
        registry.unregister("a")


def test_replace_server_swaps_atomically_and_reports_the_change() -> None:
    registry = ToolRegistry()
    changes: list[RegistryChange] = []
    registry.subscribe(changes.append)
    registry.replace_server("git", [RecordingTool("git__status"), RecordingTool("git__log")], internal=False)
    change = registry.replace_server("git", [RecordingTool("git__status"), RecordingTool("git__diff")], internal=False)
    assert change.added == ("git__diff",) and change.removed == ("git__log",)
    assert change.updated == ("git__status",) and change.server == "git"
    assert [t.spec.name for t in registry.tools(server="git")] == ["git__status", "git__diff"]
    assert len(changes) == 2 and changes[-1] == change


def test_replace_server_keeps_old_tools_when_a_new_one_is_invalid() -> None:
    registry = ToolRegistry()
    registry.replace_server("git", [RecordingTool("git__status")], internal=False)
    generation = registry.generation
    with pytest.raises(InvalidToolName, match="takes only git__"):
        registry.replace_server("git", [RecordingTool("git__log"), RecordingTool("other__x")], internal=False)
    assert [t.spec.name for t in registry.tools()] == ["git__status"]
    assert registry.generation == generation


def test_replace_server_refuses_a_name_owned_by_another_source() -> None:
    registry = ToolRegistry()
    registry.register(RecordingTool("git__status"), internal=True)
    registry.replace_server("hg", [RecordingTool("hg__status")], internal=False)
    with pytest.raises(DuplicateTool, match="'hg__status'"):
        registry.register(RecordingTool("hg__status"))


def test_replace_server_rejects_an_invalid_server_name() -> None:
    with pytest.raises(InvalidToolName, match="must not contain '__'"):
        ToolRegistry().replace_server("a__b", [], internal=False)


def test_remove_server_removes_every_tool_of_the_namespace() -> None:
    registry = ToolRegistry()
    registry.replace_server("flow", [RecordingTool("flow__a"), RecordingTool("flow__b")], internal=True)
    change = registry.remove_server("flow")
    assert change.removed == ("flow__a", "flow__b")
    assert registry.servers() == [] and len(registry) == 0
    assert registry.remove_server("flow").removed == ()


def test_generation_increases_on_every_change() -> None:
    registry = ToolRegistry()
    seen = [registry.generation]
    registry.register(RecordingTool("a"))
    seen.append(registry.generation)
    registry.unregister("a")
    seen.append(registry.generation)
    assert seen == sorted(set(seen))


def test_tools_filters_by_tier() -> None:
    registry = ToolRegistry()
    registry.register(RecordingTool("a"))
    registry.replace_server("flow", [RecordingTool("flow__x")], internal=True)
    assert [t.spec.name for t in registry.tools(internal=True)] == ["flow__x"]
    assert [t.spec.name for t in registry.tools(internal=False)] == ["a"]
    assert registry.servers() == ["flow"]


def test_aliases_resolve_back_to_the_canonical_name() -> None:
    registry = ToolRegistry()
    long_name = "svc__" + "very_long_tool_name_" * 5
    registry.register(RecordingTool("svc__files.read"))
    registry.register(RecordingTool(long_name))
    openai_alias = registry.exported_name("svc__files.read", "openai")
    assert openai_alias != "svc__files.read" and openai_alias.startswith("svc__files_read_")
    assert registry.exported_name("svc__files.read", "gemini") == "svc__files.read"
    assert registry.resolve(openai_alias) == "svc__files.read"
    assert len(registry.exported_name(long_name, "anthropic")) == 64
    assert registry.resolve(registry.exported_name(long_name, "anthropic")) == long_name
    assert registry.exported_name(long_name, "mcp") == long_name
    assert registry.aliases("svc__files.read") == {"openai-anthropic": openai_alias}


def test_aliases_are_deterministic_across_registries() -> None:
    names = ["a__b.c", "a__" + "x" * 80]
    first, second = ToolRegistry(), ToolRegistry()
    for registry in (first, second):
        registry.register_many([RecordingTool(n) for n in names])
    assert [first.exported_name(n, "openai") for n in names] == [second.exported_name(n, "openai") for n in names]


def test_alias_disappears_with_its_tool() -> None:
    registry = ToolRegistry()
    registry.register(RecordingTool("a__b.c"))
    alias = registry.exported_name("a__b.c", "openai")
    registry.unregister("a__b.c")
    assert alias not in registry


def test_a_name_equal_to_an_existing_alias_is_refused() -> None:
    registry = ToolRegistry()
    registry.register(RecordingTool("a__b.c"))
    alias = registry.exported_name("a__b.c", "openai")
    with pytest.raises(DuplicateTool, match=alias):
        registry.register(RecordingTool(alias))


def test_subscriber_errors_do_not_break_registration(caplog: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()

    def broken(change: RegistryChange) -> None:
        raise ValueError("listener bug")

    unsubscribe = registry.subscribe(broken)
    registry.register(RecordingTool("a"))
    assert "a" in registry
    assert "registry change subscriber" in caplog.text
    unsubscribe()
    caplog.clear()
    registry.register(RecordingTool("b"))
    assert "subscriber" not in caplog.text


def test_hidden_reason_for_a_visible_tool_is_none() -> None:
    registry = ToolRegistry()
    registry.register(RecordingTool("a"))
    assert registry.hidden_reason("a", TurnScope()) is None
    assert registry.hidden_reason("a") is None
