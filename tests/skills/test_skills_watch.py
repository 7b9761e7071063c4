"""Watching skill folders with real watchfiles: edits reload, broken edits keep the last good version,
and a conversation follows its active skill's file."""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest
import watchfiles
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream
from local_tools import RecordingTool
from scripted_model import ScriptedModel

from toolsift.agent import AssistantMessage, ContextMessage, Conversation, ToolCall, UserMessage
from toolsift.registry import ToolRegistry
from toolsift.search import SkillCatalog
from toolsift.skills import SkillsLoader, SkillsReloaded
from toolsift.skills import _folder_watch as folder_watch


def write(root: Path, name: str, description: str = "A skill.", *, extra: str = "", body: str = "Body.") -> Path:
    """Write a SKILL.md the way editors save: a temporary file renamed over the old one."""
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(".SKILL.md.tmp")
    temporary.write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n", encoding="utf-8")
    os.replace(temporary, path)
    return path


@pytest.fixture
async def task_group() -> AsyncIterator[TaskGroup]:
    async with anyio.create_task_group() as tg:
        yield tg
        tg.cancel_scope.cancel()


def listen(loader: SkillsLoader) -> MemoryObjectReceiveStream[SkillsReloaded]:
    send, receive = anyio.create_memory_object_stream[SkillsReloaded](100)
    loader.subscribe(send.send_nowait)
    return receive


async def wait_for(
    events: MemoryObjectReceiveStream[SkillsReloaded], condition: Callable[[SkillsReloaded], bool]
) -> SkillsReloaded:
    async for event in events:
        if condition(event):
            return event
    raise AssertionError("the event stream closed")  # pragma: no cover


async def test_watch_reloads_an_edited_skill(tmp_path: Path, task_group: TaskGroup) -> None:
    write(tmp_path, "summarize", "First.")
    loader = SkillsLoader(project=tmp_path, debounce_ms=50)
    events = listen(loader)
    await task_group.start(loader.watch)
    assert loader.get("summarize").description == "First."
    write(tmp_path, "summarize", "Second.")
    event = await wait_for(events, lambda e: "summarize" in e.changed)
    assert event.skills.get("summarize").description == "Second."
    assert loader.get("summarize").description == "Second."


async def test_watch_reports_added_and_removed_skills(tmp_path: Path, task_group: TaskGroup) -> None:
    old = write(tmp_path, "old")
    loader = SkillsLoader(project=tmp_path, debounce_ms=50)
    events = listen(loader)
    await task_group.start(loader.watch)
    write(tmp_path, "new")
    await wait_for(events, lambda e: e.added == ("new",))
    old.unlink()
    await wait_for(events, lambda e: e.removed == ("old",))
    assert list(loader.skills.skills) == ["new"]


async def test_watch_broken_edit_keeps_last_good_version_and_reports(tmp_path: Path, task_group: TaskGroup) -> None:
    write(tmp_path, "summarize", "Good.")
    loader = SkillsLoader(project=tmp_path, debounce_ms=50)
    events = listen(loader)
    await task_group.start(loader.watch)
    good = loader.get("summarize")
    path = write(tmp_path, "summarize", "Broken.", extra="allowed-tools: ['a{b}']\n")
    event = await wait_for(events, lambda e: bool(e.problems))
    (problem,) = event.problems
    assert problem.path == path and problem.field == "allowed-tools" and problem.line == 4
    assert "keeping the last good version" in problem.message
    assert loader.get("summarize") is good
    write(tmp_path, "summarize", "Fixed.")
    fixed = await wait_for(events, lambda e: "summarize" in e.changed)
    assert fixed.problems == () and loader.get("summarize").description == "Fixed."


async def test_watch_catches_edits_made_before_it_started(tmp_path: Path, task_group: TaskGroup) -> None:
    loader = SkillsLoader(project=tmp_path, debounce_ms=50)
    assert loader.load().skills == {}
    write(tmp_path, "late")
    await task_group.start(loader.watch)
    assert "late" in loader.skills


async def test_watch_without_existing_folders_waits_until_cancelled(tmp_path: Path) -> None:
    loader = SkillsLoader(project=tmp_path / "absent")
    async with anyio.create_task_group() as tg:
        await tg.start(loader.watch)
        assert loader.skills.skills == {}
        tg.cancel_scope.cancel()
    # The loader may watch again once the previous watch ended.
    async with anyio.create_task_group() as tg:
        await tg.start(loader.watch)
        tg.cancel_scope.cancel()


async def test_watch_twice_at_once_is_refused(tmp_path: Path, task_group: TaskGroup) -> None:
    loader = SkillsLoader(project=tmp_path)
    await task_group.start(loader.watch)
    with pytest.raises(RuntimeError, match=r"This SkillsLoader is already watching its folders"):
        await loader.watch()


async def test_watch_cancellation_ends_the_watch_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The watch threads get no timeout of their own: only the stop event set on
    # cancellation ends them, so without it this test would hang.
    monkeypatch.setattr(folder_watch, "awatch", functools.partial(watchfiles.awatch, rust_timeout=0))
    loader = SkillsLoader(project=tmp_path)
    async with anyio.create_task_group() as tg:
        await tg.start(loader.watch)
        tg.cancel_scope.cancel()


async def test_watch_survives_a_failing_reload(
    tmp_path: Path, task_group: TaskGroup, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    loader = SkillsLoader(project=tmp_path, debounce_ms=50)
    events = listen(loader)
    await task_group.start(loader.watch)
    failed = anyio.Event()
    real_reload = loader.areload

    async def fail_once() -> SkillsReloaded:
        monkeypatch.setattr(loader, "areload", real_reload)
        failed.set()
        raise OSError("disk went away")

    monkeypatch.setattr(loader, "areload", fail_once)
    write(tmp_path, "first")
    await failed.wait()
    write(tmp_path, "second")
    event = await wait_for(events, lambda e: "second" in e.skills)
    assert "first" in event.skills
    assert "Reloading skills from" in caplog.text and "disk went away" in caplog.text


# -- folders that go away and come back, or come late -----------------------------------------------


@pytest.mark.parametrize("how", ["deleted", "swapped"])
async def test_watch_follows_a_folder_deleted_and_recreated(tmp_path: Path, task_group: TaskGroup, how: str) -> None:
    skills = tmp_path / "skills"
    write(skills, "old")
    loader = SkillsLoader(project=skills, debounce_ms=50)
    events = listen(loader)
    await task_group.start(loader.watch)
    if how == "deleted":  # rm -rf skills, then a checkout writes it again
        shutil.rmtree(skills)
        await wait_for(events, lambda e: e.removed == ("old",))
        write(skills, "new")
    else:  # a tool that builds the new folder aside and swaps it in
        write(tmp_path / "staged", "new")
        os.rename(skills, tmp_path / "gone")
        os.rename(tmp_path / "staged", skills)
    await wait_for(events, lambda e: list(e.skills.skills) == ["new"])
    write(skills, "new", "Edited.")  # the new folder is watched, not merely scanned once
    edited = await wait_for(events, lambda e: "new" in e.changed)
    assert edited.skills.get("new").description == "Edited."


async def test_watch_picks_up_a_folder_created_after_it_started(tmp_path: Path, task_group: TaskGroup) -> None:
    skills = tmp_path / "project" / ".toolsift" / "skills"
    loader = SkillsLoader(project=skills, debounce_ms=50)
    events = listen(loader)
    await task_group.start(loader.watch)
    write(skills, "late")  # creates project/.toolsift/skills/late/ at once, then the file
    await wait_for(events, lambda e: e.added == ("late",))
    write(skills, "late", "Edited.")
    edited = await wait_for(events, lambda e: "late" in e.changed)
    assert edited.skills.get("late").description == "Edited."


# -- a conversation follows its active skill's SKILL.md ---------------------------------------------


def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register_many([RecordingTool("read_file", read_only=True), RecordingTool("write_file")])
    reg.replace_server("flow", [RecordingTool("flow__memory_store")], internal=True)
    return reg


def tool_names(conversation: Conversation) -> list[str]:
    """What the next turn's scope allows (its tool list may still declare tools that left the scope)."""
    scope = conversation.turn().scope
    return [t["function"]["name"] for t in conversation.registry.schemas_for_tools(scope, "openai")]


async def test_edited_allowed_tools_apply_to_schemas_and_calls_at_once(tmp_path: Path, task_group: TaskGroup) -> None:
    write(tmp_path, "ops", extra="allowed-tools: [read_file, write_file]\n")
    loader = SkillsLoader(project=tmp_path, debounce_ms=50)
    events = listen(loader)
    await task_group.start(loader.watch)
    reg = registry()
    conversation = Conversation(reg, loader)
    await conversation.use("ops")
    round_scope = conversation.turn().scope  # built before the edit, as a running round's is
    assert tool_names(conversation) == ["read_file", "write_file"]
    write(tmp_path, "ops", extra="allowed-tools: [read_file]\n")
    await wait_for(events, lambda e: "ops" in e.changed)
    assert tool_names(conversation) == ["read_file"]
    for scope in (round_scope, None):
        refused = await conversation.call_tool(ToolCall("w", "write_file", {}), scope)
        assert refused.result.is_error and "layer 4" in refused.result.text_content()
        assert "no longer in scope: skill 'ops' no longer allows it (its SKILL.md changed)" in (
            refused.result.text_content()
        )
    assert reg.get("write_file").calls == []  # type: ignore[attr-defined]
    assert (await conversation.call_tool(ToolCall("r", "read_file", {}), round_scope)).result.is_error is False
    assert conversation.active_skill is loader.get("ops") and conversation.take_notices() == []


async def test_deleted_skill_drops_to_no_skill_with_a_notice(
    tmp_path: Path, task_group: TaskGroup, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(tmp_path, "flow-memory", extra="allowed-tools: flow__memory_*\n")
    loader = SkillsLoader(project=tmp_path, debounce_ms=50)
    events = listen(loader)
    await task_group.start(loader.watch)
    reg = registry()
    conversation = Conversation(reg, loader)
    await conversation.use("flow-memory")
    assert tool_names(conversation) == ["flow__memory_store"]
    path.unlink()
    await wait_for(events, lambda e: e.removed == ("flow-memory",))
    model = ScriptedModel(
        AssistantMessage(tool_calls=(ToolCall("m", "flow__memory_store", {}),)), AssistantMessage(text="done")
    )
    reply = await conversation.send("remember this", model)
    assert reply.notices == [
        "Skill 'flow-memory' is no longer active: it is no longer loaded (removed or renamed). "
        "The conversation goes on without a skill."
    ]
    assert "is no longer active" in caplog.text
    (called,) = reply.tool_calls
    assert called.result.is_error and "layer 1" in called.result.text_content()
    assert reg.get("flow__memory_store").calls == []  # type: ignore[attr-defined]
    instructions, history, tools = model.seen[0]
    assert "# Skill" not in instructions
    assert "Skill 'flow-memory' is no longer active because it is no longer loaded" in str(history)
    # The global tools that came back were appended, which rewrites what follows the list anyway: the
    # skill's tools left the list at no cost (see the agent's KeepRule).
    assert "flow__memory_store" not in str(tools) and "read_file" in str(tools)
    assert conversation.active_skill is None and conversation.take_notices() == []


@pytest.mark.parametrize("catalog", [False, True], ids=["loader", "catalog"])
async def test_broken_edit_drops_the_skill_though_the_loader_keeps_the_last_good_version(
    tmp_path: Path, task_group: TaskGroup, catalog: bool
) -> None:
    write(tmp_path, "ops", extra="allowed-tools: [read_file, flow__memory_*]\n")
    loader = SkillsLoader(project=tmp_path, debounce_ms=50)
    events = listen(loader)
    await task_group.start(loader.watch)
    reg = registry()
    conversation = Conversation(reg, SkillCatalog(loader) if catalog else loader)
    await conversation.use("ops")
    good = loader.get("ops")
    write(tmp_path, "ops", extra="allowed-tools: [read_file\n")  # invalid YAML, half-saved
    await wait_for(events, lambda e: bool(e.problems))
    assert loader.get("ops") is good  # the loader's last good version, as before
    refused = await conversation.call_tool(ToolCall("m", "flow__memory_store", {}))
    assert refused.result.is_error and "layer 1" in refused.result.text_content()
    assert reg.get("flow__memory_store").calls == []  # type: ignore[attr-defined]
    (notice,) = conversation.take_notices()
    assert notice.startswith("Skill 'ops' is no longer active: its SKILL.md no longer parses: ")
    assert str(tmp_path / "ops" / "SKILL.md") in notice
    assert conversation.active_skill is None and conversation.turn().scope.skill is None
    again = await conversation.handle_command("/use ops")
    assert again is not None and not again.ok and "SKILL.md" in again.text
    write(tmp_path, "ops", extra="allowed-tools: [read_file]\n")
    await wait_for(events, lambda e: "ops" in e.changed and not e.problems)
    assert (await conversation.handle_command("/use ops")).ok  # type: ignore[union-attr]
    assert tool_names(conversation) == ["read_file"]


async def test_changed_body_is_rendered_again_with_the_bound_arguments(tmp_path: Path) -> None:
    write(tmp_path, "fix", extra="variables: [task]\n", body="Task: {{ task }}")
    loader = SkillsLoader(project=tmp_path)
    conversation = Conversation(registry(), loader)
    await conversation.use("fix", "the login bug")
    write(tmp_path, "fix", extra="variables: [task]\nallowed-tools: read_file\n", body="Now: {{ task }}")
    assert "fix" in loader.reload().changed
    # The grant applies at once; the body at the next refresh (send() refreshes before every round).
    assert tool_names(conversation) == ["read_file"]
    assert conversation.instructions_now().endswith("Task: the login bug")
    model = ScriptedModel(AssistantMessage(text="ok"))
    await conversation.send("go", model)
    assert model.seen[0][0] == "" and conversation.instructions_now() == "# Skill: fix\n\nNow: the login bug"
    *_, told, asked = model.seen[0][1]
    assert isinstance(told, ContextMessage) and isinstance(asked, UserMessage)
    assert "these instructions replace its earlier ones" in told.text and told.text.endswith("\n\nNow: the login bug")


async def test_changed_skill_that_no_longer_takes_its_arguments_is_dropped(tmp_path: Path) -> None:
    write(tmp_path, "fix", extra="variables: [task]\n", body="Task: {{ task }}")
    loader = SkillsLoader(project=tmp_path)
    conversation = Conversation(registry(), loader)
    await conversation.use("fix", "the login bug")
    write(tmp_path, "fix", extra="variables: [task, owner]\n", body="{{ owner }}: {{ task }}")
    loader.reload()
    await conversation.refresh_skill()
    (notice,) = conversation.take_notices()
    assert "Skill 'fix' is no longer active: it changed and no longer renders with 'the login bug'" in notice
    assert "expected name=value pairs" in notice and conversation.active_skill is None
