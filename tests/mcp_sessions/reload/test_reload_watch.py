"""Watching the config file end to end, rejected edits, and the Toolbox's opt-in watch."""

from __future__ import annotations

import logging
import os
from functools import partial
from pathlib import Path

import anyio
import pytest
from mcp_helpers import faulty, in_memory
from reload_helpers import Recorder, example, write_config, write_text

from toolsift.config import load_config
from toolsift.mcp_sessions import SessionOptions
from toolsift.mcp_sessions._internal import SessionState
from toolsift.mcp_sessions.reload import McpServerManager
from toolsift.mcp_sessions.reload._watch import link_chain
from toolsift.registry import ToolRegistry
from toolsift.skills import SkillsReloaded
from toolsift.toolbox import Toolbox

DEBOUNCE_MS = 50


def memory() -> SessionOptions:
    """The servers the watched configs name, in this process: watching needs no child processes."""
    return in_memory(dict.fromkeys(("notes", "a", "b", "c"), faulty()))


async def test_watch_applies_each_written_config(tmp_path: Path) -> None:
    path = write_config(tmp_path / "toolsift.json", {})
    registry = ToolRegistry()
    async with (
        McpServerManager(registry, load_config(path), options=memory()) as manager,
        anyio.create_task_group() as watcher,
    ):
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
    async with (
        McpServerManager(ToolRegistry(), load_config(path), options=memory()) as manager,
        anyio.create_task_group() as watcher,
    ):
        events = Recorder(manager)
        session = manager["a"]
        await watcher.start(partial(manager.watch, path, debounce_ms=DEBOUNCE_MS))
        write_text(path, '{"tools": {"mcpServers": {"a": ')
        rejected = await events.next("config.rejected")
        assert rejected.error is not None and rejected.server is None
        assert rejected.reason is not None and "invalid JSON" in rejected.reason
        assert rejected.reason.endswith("; the running config stays in force")
        assert str(rejected).startswith(f"config.rejected: {path}:1: invalid JSON")

        write_config(path, {"a": example("faulty.py", timeout=-1), "b": example("faulty.py")})
        rejected = await events.next("server.rejected", "a")
        # One bad entry keeps its server as it runs; the rest of the edit applies.
        assert rejected.error is not None and "tools.mcpServers.a.timeout" in str(rejected.error)
        await events.next("server.added", "b")
        assert manager["a"] is session and set(manager) == {"a", "b"}

        write_config(path, {"a": example("faulty.py", env={"TOKEN": "${TOOLSIFT_UNSET_FOR_TEST}"})})
        rejected = await events.next("server.rejected", "a")
        assert "Cannot resolve '${TOOLSIFT_UNSET_FOR_TEST}' in server 'a'" in str(rejected.error)
        await events.next("server.removed", "b")

        # An editor saving mid-edit: the entry lost its command. The server runs on as it was.
        write_config(path, {"a": {"args": ["faulty.py"]}})
        rejected = await events.next("server.rejected", "a")
        assert "server 'a' has neither 'command'" in str(rejected.error)
        assert manager["a"] is session and session.state is SessionState.READY

        path.unlink()
        rejected = await events.next("config.rejected")
        assert "cannot read the config file" in str(rejected.error)
        assert manager["a"] is session and session.state is SessionState.READY

        write_config(path, {"a": example("faulty.py"), "b": example("faulty.py")})
        await events.next("server.added", "b")
        assert manager["a"] is session and set(manager) == {"a", "b"}
        assert [e.kind for e in events.events].count("config.rejected") == 2
        watcher.cancel_scope.cancel()


async def test_watch_follows_a_symlinked_config_to_its_target_and_to_a_new_target(tmp_path: Path) -> None:
    dotfiles, other, project = (tmp_path / name for name in ("dotfiles", "other", "project"))
    for folder in (dotfiles, other, project):
        folder.mkdir()
    real = write_config(dotfiles / "toolsift.json", {})
    link = project / "toolsift.json"
    link.symlink_to(Path("..") / "dotfiles" / "toolsift.json")  # as GNU stow links a dotfile into place
    async with (
        McpServerManager(ToolRegistry(), load_config(link), options=memory()) as manager,
        anyio.create_task_group() as watcher,
    ):
        events = Recorder(manager)
        await watcher.start(partial(manager.watch, link, debounce_ms=DEBOUNCE_MS))
        write_config(real, {"a": example("faulty.py")})  # the dotfile itself is edited
        await events.next("server.added", "a")
        # The link is re-pointed: the new target is in force, and it is the one watched now.
        target = write_config(other / "toolsift.json", {"b": example("faulty.py")})
        temporary = project / ".toolsift.json.link"
        temporary.symlink_to(target)
        os.replace(temporary, link)
        await events.next("server.added", "b")
        await events.next("server.removed", "a")
        write_config(target, {"b": example("faulty.py"), "c": example("faulty.py")})
        await events.next("server.added", "c")
        assert set(manager) == {"b", "c"}
        watcher.cancel_scope.cancel()


def test_link_chain_follows_links_and_stops_at_loops_and_dangling_ends(tmp_path: Path) -> None:
    plain = tmp_path / "plain.json"
    plain.write_text("{}")
    assert link_chain(plain) == (plain,)
    first, second = tmp_path / "first", tmp_path / "second"
    first.symlink_to(second)
    second.symlink_to(plain)
    assert link_chain(first) == (first, second, plain)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "missing")
    assert link_chain(dangling) == (dangling, tmp_path / "missing")
    one, two = tmp_path / "one", tmp_path / "two"
    one.symlink_to(two)
    two.symlink_to(one)
    assert link_chain(one) == (one, two)


async def test_reload_warns_that_other_sections_wait_for_the_next_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write_config(tmp_path / "toolsift.json", {})
    async with McpServerManager(ToolRegistry(), load_config(path)) as manager:
        events = Recorder(manager)
        write_config(
            path,
            {},
            agents={"helper": {"planMode": True}},
            tools={"mcpServers": {}, "permissions": [{"match": "*", "requiredLevel": "admin"}]},
        )
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
        write_config(
            path, {"notes": example("faulty.py", internalOnly=False)}, skills={"paths": ["skills"], "userSkills": False}
        )
        await events.next("server.added", "notes")
        assert box.sessions["notes"].state is SessionState.READY
        assert "notes__echo" in [t["name"] for t in box.conversation().turn("mcp").tools]
        (skills / "hello").mkdir()
        (skills / "hello" / "SKILL.md").write_text("---\nname: hello\ndescription: Says hello.\n---\nHello.\n")
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
