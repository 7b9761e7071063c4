"""Hot reload of a project's config starts only what the project's trust covers."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import anyio
import pytest
from mcp_helpers import faulty, in_memory_everywhere
from reload_helpers import Recorder, example, write_config
from trust_helpers import marker_server

from toolsift.config import ProjectTrust, load_config
from toolsift.mcp_sessions._internal import SessionState
from toolsift.mcp_sessions.reload import McpServerManager
from toolsift.registry import ToolRegistry
from toolsift.toolbox import Toolbox

DEBOUNCE_MS = 50


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)  # where the project's config is found, and its servers run
    return folder


async def test_a_watched_project_config_starts_no_launch_its_trust_does_not_cover(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The trusted servers run in this process (trust is a question of their config); only the untrusted
    # 'marker' launches a real child, whose marker file shows whether it was started.
    in_memory_everywhere(monkeypatch, dict.fromkeys(("kept", "moved", "tuned", "gone"), faulty()))
    servers = {name: example("faulty.py") for name in ("kept", "moved", "tuned", "gone")}
    path = write_config(project / "toolsift.json", servers)
    store = ProjectTrust(tmp_path / "trusted.json")
    store.remember(load_config(path), path)
    config = load_config(path)
    async with Toolbox(config, watch=True, trust=store.launches(config, path)) as box:
        events = Recorder(box.sessions)
        kept, moved = box.sessions["kept"], box.sessions["moved"]
        entry, marker = marker_server(project)
        edited = {
            "kept": example("faulty.py"),
            "tuned": example("faulty.py", timeout=5),
            "moved": example("faulty.py", env={"PYTHONPATH": str(project)}),
            "marker": entry,
        }
        write_config(path, edited)
        untrusted = await events.next("server.untrusted", "marker")
        assert untrusted.reason == (
            f"{path}: server 'marker' is new, and the trust given to this project's config "
            f"does not cover it; run 'toolsift trust' in {project} to trust it, then save "
            "the file again; it is not started"
        )
        assert (await events.next("server.untrusted", "moved")).reason.endswith("; it keeps its previous settings")
        # The rest of the edit applies: a trusted change, a removal, an unchanged server.
        assert (await events.next("server.restarted", "tuned")).state is SessionState.READY
        await events.next("server.removed", "gone")
        assert not marker.exists()
        assert set(box.sessions) == {"kept", "moved", "tuned"} and "marker" not in box.registry.servers()
        assert box.sessions["kept"] is kept and box.sessions["moved"] is moved
        assert box.sessions.servers["moved"].env == {}

        store.remember(load_config(path), path)  # what 'toolsift trust' does
        write_config(path, edited)  # saved again: now it is trusted
        assert (await events.next("server.added", "marker")).state is SessionState.READY
        assert marker.read_text() == "ran"
        await events.next("server.restarted", "moved")
        assert [e.server for e in events.events if e.kind == "server.untrusted"] == ["marker", "moved"]


async def test_a_manager_with_trust_starts_only_the_covered_launches_on_entry(project: Path, tmp_path: Path) -> None:
    path = write_config(project / "toolsift.json", {"a": example("faulty.py")})
    store = ProjectTrust(tmp_path / "trusted.json")
    launches = store.launches(load_config(path), path)  # admitted for this run, not remembered
    entry, marker = marker_server(project)
    # The file changed between the check and the start.
    config = load_config(write_config(path, {"a": example("faulty.py"), "marker": entry}))
    manager = McpServerManager(ToolRegistry(), config, trust=launches)
    events = Recorder(manager)
    async with manager, anyio.create_task_group() as watcher:
        assert set(manager) == {"a"} and "marker" not in manager.servers
        assert "it is not started" in str(await events.next("server.untrusted", "marker"))
        await watcher.start(partial(manager.watch, debounce_ms=DEBOUNCE_MS))
        write_config(path, {"marker": entry})  # a reload applies the removal, still not the untrusted start
        await events.next("server.removed", "a")
        await events.next("server.untrusted", "marker")
        assert len(manager) == 0 and not marker.exists()
        watcher.cancel_scope.cancel()


async def test_no_connect_runs_a_launch_whose_env_file_changed_after_trust(project: Path, tmp_path: Path) -> None:
    entry, marker = marker_server(project)
    (project / "server.env").write_text("LOG_LEVEL=info\n")
    path = write_config(project / "toolsift.json", {"lazy": {**entry, "envFile": "server.env", "lazy": True}})
    store = ProjectTrust(tmp_path / "trusted.json")
    store.remember(load_config(path), path)
    config = load_config(path)
    async with McpServerManager(ToolRegistry(), config, trust=store.launches(config, path)) as manager:
        assert manager["lazy"].state is SessionState.IDLE
        with (project / "server.env").open("a") as env:  # the file is the same; what it launches is not
            env.write(f"PYTHONPATH={project}\n")
        assert await manager.start_lazy(["lazy"]) == ["lazy"]
        [row] = manager.status()
        assert row.state is SessionState.ERROR and row.error is not None
        assert (
            "server 'lazy' launches something other than what was trusted, and the trust given to this "
            "project's config does not cover it; run 'toolsift trust'"
        ) in row.error
        assert not marker.exists()
