"""Watching skill folders with real watchfiles: edits reload, broken edits keep the last good version."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream

from toolsift.skills import SkillsLoader, SkillsReloaded

DEADLINE = 10  # seconds; a reload normally lands in well under one


def write(root: Path, name: str, description: str = "A skill.", *, extra: str = "") -> Path:
    """Write a SKILL.md the way editors save: a temporary file renamed over the old one."""
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(".SKILL.md.tmp")
    temporary.write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\nBody.\n", encoding="utf-8")
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
    with anyio.fail_after(DEADLINE):
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


async def test_watch_cancellation_returns_promptly(tmp_path: Path) -> None:
    loader = SkillsLoader(project=tmp_path)
    async with anyio.create_task_group() as tg:
        await tg.start(loader.watch)
        started = time.monotonic()
        tg.cancel_scope.cancel()
    # Without the stop event the watch thread would hold the cancellation for its
    # 5-second timeout.
    assert time.monotonic() - started < 2


async def test_watch_survives_a_failing_reload(
    tmp_path: Path, task_group: TaskGroup, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    loader = SkillsLoader(project=tmp_path, debounce_ms=50)
    events = listen(loader)
    await task_group.start(loader.watch)
    failed = anyio.Event()
    real_reload = loader.reload

    def fail_once() -> SkillsReloaded:
        monkeypatch.setattr(loader, "reload", real_reload)
        failed.set()
        raise OSError("disk went away")

    monkeypatch.setattr(loader, "reload", fail_once)
    write(tmp_path, "first")
    with anyio.fail_after(DEADLINE):
        await failed.wait()
    write(tmp_path, "second")
    event = await wait_for(events, lambda e: "second" in e.skills)
    assert "first" in event.skills
    assert "Reloading skills from" in caplog.text and "disk went away" in caplog.text
