"""A server's served skills are taken again when they may have changed: a hot reload, a reconnect, a lazy start.

The upstream is ``toolsift serve`` of the example skill ``release-notes``: a real child where its process is
the point (the reconnect kills it), in this process elsewhere; the grants live in a temporary user folder,
approved the way ``toolsift skills approve`` does.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp_helpers import example_server, served_in_process

from toolsift.config import SkillGrants
from toolsift.search._internal import McpServedSkill
from toolsift.toolbox import Toolbox

ROOT = Path(__file__).resolve().parent.parent.parent
RELEASE_NOTES = ROOT / "examples" / "skills" / "release-notes"
NAME = "docs/release-notes"
WAIT = 60  # seconds: a safety net for a stuck test, never a synchronisation


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The upstream project's config; the user folder (and its grants) is the test's own."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "upstream"
    (folder / "ws").mkdir(parents=True)
    shutil.copytree(RELEASE_NOTES, folder / "skills" / "release-notes")
    path = folder / "toolsift.json"
    path.write_text(json.dumps({"workspace": "ws", "skills": {"paths": ["skills"], "userSkills": False}}))
    return path


def write_config(path: Path, served: Path, **docs: Any) -> Path:
    command = {"command": sys.executable, "args": ["-m", "toolsift.serve", "--config", str(served)]}
    config = {"tools": {"mcpServers": {"docs": {**command, **docs}}}, "skills": {"userSkills": False}}
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def skill(box: Toolbox) -> McpServedSkill:
    found = box.catalog.get(NAME)
    assert isinstance(found, McpServedSkill)
    return found


def approve(box: Toolbox) -> McpServedSkill:
    """Approve the skill as listed now; the running toolbox sees it without taking the skills again."""
    taken = skill(box)
    SkillGrants().approve("docs", taken.uri, taken.resources, taken.requested_tools)
    approved = skill(box)
    assert approved.approved and approved.allowed_tools == ("read_file", "list_directory")
    return approved


def change_reference(served: Path) -> None:
    reference = served.parent / "skills" / "release-notes" / "reference" / "sections.md"
    reference.write_text(reference.read_text() + "\nAlso run the tests.\n", encoding="utf-8")


@asynccontextmanager
async def takes(box: Toolbox) -> AsyncIterator[MemoryObjectReceiveStream[str]]:
    """The names of the servers whose skills the toolbox takes again, as it does."""
    send, receive = anyio.create_memory_object_stream[str](100)
    stop = box.served_skills.subscribe(send.send_nowait)
    try:
        with send, receive:
            yield receive
    finally:
        stop()


async def until(box: Toolbox, taken: MemoryObjectReceiveStream[str], done: Any) -> None:
    """Wait for takes of ``docs`` until ``done()`` holds."""
    with anyio.fail_after(WAIT):
        while not done():
            assert await taken.receive() == "docs"


async def test_a_hot_reload_takes_the_servers_skills_again_and_a_changed_skill_loses_its_grant(
    tmp_path: Path, served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path / "toolsift.json", served)
    async with (
        served_in_process(monkeypatch, {"docs": served}),
        Toolbox.from_config(config, watch=True) as box,
        takes(box) as taken,
    ):
        before = approve(box)
        change_reference(served)
        write_config(config, served, env={"EDITED": "1"})  # the reload replaces the server's session
        await until(box, taken, lambda: dict(skill(box).resources) != dict(before.resources))
        after = skill(box)
        assert not after.approved and after.allowed_tools == ()
        assert after.requested_tools == before.requested_tools

        write_config(config, served, enabled=False)  # gone from the config: its skills leave too
        await until(box, taken, lambda: NAME not in {s.name for s in box.served_skills.skills})


def _serve_processes(served: Path) -> list[int]:
    """The ``toolsift serve`` processes of this test's upstream (its config's path is in their command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if entry.name.isdigit() and os.fsencode(served) in command:
            found.append(int(entry.name))
    return found


async def test_a_reconnect_takes_the_servers_skills_again(tmp_path: Path, served: Path) -> None:
    config = write_config(tmp_path / "toolsift.json", served)
    async with Toolbox.from_config(config) as box, takes(box) as taken:
        before = approve(box)
        change_reference(served)
        (pid,) = _serve_processes(served)
        os.kill(pid, signal.SIGKILL)  # the session notices, reconnects, and the new server lists the new digests
        await until(box, taken, lambda: dict(skill(box).resources) != dict(before.resources))
        assert not skill(box).approved
        assert box.sessions["docs"].restarts == 1


async def test_a_lazy_servers_skills_are_taken_when_it_starts(
    tmp_path: Path, served: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path / "toolsift.json", served, lazy=True)
    data = json.loads(config.read_text())
    # A 2025-11-25 server without the extension: asked (that era cannot declare it), it answers -32601, quietly.
    general = {"command": sys.executable, "args": [str(ROOT / "examples" / "servers" / "general.py")]}
    data["tools"]["mcpServers"]["general"] = {**general, "protocol": "legacy"}
    config.write_text(json.dumps(data))
    with caplog.at_level(logging.WARNING, logger="toolsift.search"):
        async with (
            served_in_process(monkeypatch, {"docs": served}, also={"general": example_server("general.py")}),
            Toolbox.from_config(config) as box,
            takes(box) as taken,
        ):
            assert NAME not in {s.name for s in box.catalog.invocable()}
            await box.sessions.start_lazy(["docs"])
            await until(box, taken, lambda: NAME in {s.name for s in box.catalog.invocable()})
            assert [s.server for s in box.served_skills.skills] == ["docs"]
    assert [r.getMessage() for r in caplog.records if r.name == "toolsift.search"] == []
