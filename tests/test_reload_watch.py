"""Watching the config file end to end, rejected edits, and the Toolbox's opt-in watch."""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path

import anyio
import pytest
from reload_helpers import Recorder, example, write_config, write_text

from toolsift.mcp_sessions import McpServerManager, SessionState, load_config
from toolsift.registry import ToolRegistry
from toolsift.skills import SkillsReloaded
from toolsift.toolbox import Toolbox

DEBOUNCE_MS = 50


async def test_watch_applies_each_written_config(tmp_path: Path) -> None:
    path = write_config(tmp_path / "toolsift.json", {})
    registry = ToolRegistry()
    async with McpServerManager(registry, load_config(path)) as manager, anyio.create_task_group() as watcher:
        events = Recorder(manager)
        await watcher.start(partial(manager.watch, debounce_ms=DEBOUNCE_MS))
        write_config(path, {"notes": example("faulty.py", internalOnly=False)})
        assert (await events.next("server.added", "notes")).state is SessionState.READY
        assert "notes__echo" in (await events.next("tools.changed", "notes")).tools
        assert registry.servers() == ["notes"] and manager.config is not None and "notes" in manager.config.servers
        write_config(path, {})
        await events.next("server.draining", "notes")
        assert (await events.next("tools.changed", "notes")).tools == ()
        await events.next("server.removed", "notes")
        assert registry.servers() == [] and len(manager) == 0
        with pytest.raises(RuntimeError, match="already watching a config file"):
            await manager.watch(path)
        watcher.cancel_scope.cancel()


async def test_watch_rejects_invalid_edits_and_keeps_the_running_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLSIFT_UNSET_FOR_TEST", raising=False)
    path = write_config(tmp_path / "toolsift.json", {"a": example("faulty.py")})
    async with McpServerManager(ToolRegistry(), load_config(path)) as manager, anyio.create_task_group() as watcher:
        events = Recorder(manager)
        session = manager["a"]
        await watcher.start(partial(manager.watch, path, debounce_ms=DEBOUNCE_MS))
        write_text(path, '{"tools": {"mcpServers": {"a": ')
        rejected = await events.next("config.rejected")
        assert rejected.error is not None and rejected.server is None
        assert rejected.reason is not None and "invalid JSON" in rejected.reason
        assert rejected.reason.endswith("; the running config stays in force")
        assert str(rejected).startswith(f"config.rejected: {path}:1: invalid JSON")

        write_config(path, {"a": example("faulty.py", timeout=-1), "b": example("general.py")})
        rejected = await events.next("config.rejected")
        # One bad server rejects the whole edit: applying the rest would drop "a".
        assert rejected.error is not None and rejected.error.field == "tools.mcpServers.a.timeout"

        write_config(path, {"a": example("faulty.py", env={"TOKEN": "${TOOLSIFT_UNSET_FOR_TEST}"})})
        rejected = await events.next("config.rejected")
        assert "Cannot resolve '${TOOLSIFT_UNSET_FOR_TEST}' in server 'a'" in str(rejected.error)

        path.unlink()
        rejected = await events.next("config.rejected")
        assert "cannot read the config file" in str(rejected.error)
        assert manager["a"] is session and session.state is SessionState.READY

        write_config(path, {"a": example("faulty.py"), "b": example("faulty.py")})
        await events.next("server.added", "b")
        assert manager["a"] is session and set(manager) == {"a", "b"}
        assert [e.kind for e in events.events].count("config.rejected") == 4
        watcher.cancel_scope.cancel()


async def test_reload_warns_that_other_sections_wait_for_the_next_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write_config(tmp_path / "toolsift.json", {})
    async with McpServerManager(ToolRegistry(), load_config(path)) as manager:
        events = Recorder(manager)
        write_config(path, {}, agents={"helper": {"planMode": True}},
                     tools={"mcpServers": {}, "permissions": [{"match": "*", "requiredLevel": "admin"}]})
        caplog.set_level(logging.WARNING, logger="toolsift.mcp_sessions")
        assert await manager.reload() is not None
        assert f"Config {path}: changes to agents, tools.permissions take effect at the next start" in caplog.text
        write_text(path, "[]")
        assert await manager.reload(path) is None
        rejected = await events.next("config.rejected")
        assert "expected a JSON object at the top level" in str(rejected.error)


async def test_toolbox_watch_follows_the_config_file_and_the_skill_folders(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    skills.mkdir()
    path = write_config(tmp_path / "toolsift.json", {}, skills={"paths": ["skills"], "userSkills": False})
    box = Toolbox.from_config(path, watch=True, drain_seconds=5)
    events = Recorder(box.manager)
    send, receive = anyio.create_memory_object_stream[SkillsReloaded](10)
    box.skills.subscribe(send.send_nowait)
    async with box, send, receive:
        assert box.manager.drain_seconds == 5 and box.sessions is box.manager
        write_config(path, {"notes": example("faulty.py", internalOnly=False)},
                     skills={"paths": ["skills"], "userSkills": False})
        await events.next("server.added", "notes")
        assert box.sessions["notes"].state is SessionState.READY
        assert "notes__echo" in [t["name"] for t in box.conversation().turn("mcp").tools]
        (skills / "hello").mkdir()
        (skills / "hello" / "SKILL.md").write_text("---\nname: hello\ndescription: Says hello.\n---\nHello.\n")
        with anyio.fail_after(10):
            reloaded = await receive.receive()
        assert reloaded.added == ("hello",) and box.skills.get("hello").description == "Says hello."
        with pytest.raises(RuntimeError, match="already watching"):
            await box.watch()
    assert box.manager.status()[0].state is SessionState.CLOSED


async def test_toolbox_watch_needs_a_started_box_loaded_from_a_file(tmp_path: Path) -> None:
    path = write_config(tmp_path / "toolsift.json", {}, skills={"paths": [], "userSkills": False})
    box = Toolbox.from_config(path)
    with pytest.raises(RuntimeError, match="Toolbox is not started"):
        await box.watch()
    box.config = box.config.model_copy(update={"path": None})
    async with box:
        with pytest.raises(ValueError, match="config was not loaded from a file; there is nothing to watch"):
            await box.watch()
