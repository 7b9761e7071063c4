"""Files planted from the sandbox: a link in the audit log's place, an env file not written yet, a missing config.

Each attack runs for real, through ``exec_shell`` in the bubblewrap sandbox,
and checks what reached the host: the file outside untouched, the missing
file still missing once the run is over, the planted code never run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from sandbox_helpers import marked_seconds, needs_bwrap, running_with
from waits import poll_until

from toolsift.agent import ToolCall
from toolsift.builtins import CommandPolicy, Workspace
from toolsift.builtins._protected import ProtectedPath
from toolsift.builtins._shell import ShellTool
from toolsift.registry import Level, Permissions, ToolRegistry, ToolResult
from toolsift.toolbox import Toolbox

pytestmark = needs_bwrap

BASHRC = "alias ls='ls --color'\n"
PROGRAMS = ["ln", "python3", "cp", "tar", "git", "mv"]
EXECUTE = Permissions(level=Level.EXECUTE)


def write_config(ws: Path, servers: dict[str, Any] | None = None) -> Path:
    """The brief's config, in the workspace: an audit log beside it, the workspace tools on."""
    data = {
        "audit": {"path": "audit.jsonl"},
        "tools": {
            "builtins": {"enabled": True, "commands": {"allowedPrograms": PROGRAMS, "timeout": 60}},
            "mcpServers": servers or {},
        },
        "agents": {"runner": {"permissions": {"level": "execute"}}},
        "skills": {"userSkills": False},
    }
    path = ws / "toolsift.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


async def run_all(box: Toolbox, commands: list[str]) -> list[ToolResult]:
    chat = box.conversation("runner")
    return [
        (await chat.call_tool(ToolCall(str(index), "exec_shell", {"command": command}))).result
        for index, command in enumerate(commands)
    ]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    made = tmp_path / "ws"
    made.mkdir()
    (made / "notes.txt").write_text("notes\n", encoding="utf-8")
    (made / "server.py").write_text("print('hi')\n", encoding="utf-8")
    return made


@pytest.fixture
def bashrc(tmp_path: Path) -> Path:
    made = tmp_path / "home" / ".bashrc"
    made.parent.mkdir()
    made.write_text(BASHRC, encoding="utf-8")
    return made


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True, capture_output=True
    )


def _linking_tar_and_repository(ws: Path, target: Path) -> None:
    """``links.tar`` and the repository ``repo`` each hold ``audit.jsonl`` as a link to ``target``."""
    with tarfile.open(ws / "links.tar", "w") as archive:
        entry = tarfile.TarInfo("audit.jsonl")
        entry.type, entry.linkname = tarfile.SYMTYPE, str(target)
        archive.addfile(entry)
    (ws / "repo").mkdir()
    _git(ws / "repo", "init", "-q")
    (ws / "repo" / "audit.jsonl").symlink_to(target)
    _git(ws / "repo", "add", "audit.jsonl")
    _git(ws / "repo", "commit", "-q", "-m", "link")


async def test_no_program_can_plant_a_link_the_audit_log_would_follow(ws: Path, bashrc: Path) -> None:
    _linking_tar_and_repository(ws, bashrc)
    attacks = [
        f"ln -s {bashrc} audit.jsonl",
        f"ln -sf {bashrc} audit.jsonl",
        "ln -f server.py audit.jsonl",
        f"cp -s {ws / 'notes.txt'} audit.jsonl",
        f"python3 -c \"import os; os.symlink('{bashrc}', 'x'); os.replace('x', 'audit.jsonl')\"",
        "tar -xf links.tar",
        "git --git-dir=repo/.git --work-tree=. checkout -f HEAD -- audit.jsonl",
        "mv notes.txt audit.jsonl",
    ]
    async with Toolbox.from_config(write_config(ws)) as box:
        results = await run_all(box, [*attacks, "ln -s '$(touch PWNED)' innocent"])
    assert bashrc.read_text(encoding="utf-8") == BASHRC
    assert (ws / "notes.txt").read_text(encoding="utf-8") == "notes\n"
    assert (ws / "server.py").read_text(encoding="utf-8") == "print('hi')\n"
    assert all(result.is_error for result in results[:-1]), [result.text_content() for result in results]
    audit = ws / "audit.jsonl"
    assert not audit.is_symlink() and audit.stat().st_nlink == 1
    records = [json.loads(line) for line in audit.read_text(encoding="utf-8").splitlines()]
    assert [record["arguments"]["command"] for record in records] == [*attacks, "ln -s '$(touch PWNED)' innocent"]


async def test_an_audit_log_removed_meanwhile_is_made_again_before_a_program_runs(ws: Path, bashrc: Path) -> None:
    async with Toolbox.from_config(write_config(ws)) as box:
        (ws / "audit.jsonl").unlink()  # rotated away, say
        [planted] = await run_all(box, [f"ln -s {bashrc} audit.jsonl"])
    assert planted.is_error and "File exists" in planted.text_content()
    assert bashrc.read_text(encoding="utf-8") == BASHRC
    assert json.loads((ws / "audit.jsonl").read_text(encoding="utf-8"))["tool"] == "exec_shell"


async def test_an_env_file_planted_from_the_sandbox_never_runs_at_the_next_start(ws: Path, tmp_path: Path) -> None:
    ran = tmp_path / "ran-outside-the-sandbox"
    (ws / "evil").mkdir()
    (ws / "evil" / "sitecustomize.py").write_text(f"open({str(ran)!r}, 'w').close()\n", encoding="utf-8")
    (ws / "planted.env").write_text(f"PYTHONPATH={ws / 'evil'}\n", encoding="utf-8")
    server = {"command": sys.executable, "args": ["-c", "pass"], "envFile": "app.env", "internalOnly": False}
    # A config named by the user (-c, TOOLSIFT_CONFIG): no trust check stands between it and the next start.
    config = write_config(ws, {"x": server})
    attacks = [
        "cp planted.env app.env",
        "mv planted.env app.env",
        "ln -s planted.env app.env",
        "python3 -c \"open('app.env', 'w').write(open('planted.env').read())\"",
        "tar -cf app.env planted.env",
    ]
    async with Toolbox.from_config(config) as box:
        results = await run_all(box, attacks)
    async with Toolbox.from_config(config):
        pass  # the next start: server x fails on its missing env file, as before
    assert not ran.exists()
    assert not os.path.lexists(ws / "app.env")  # missing again, as before the run: no placeholder left
    assert all(result.is_error for result in results), [result.text_content() for result in results]


ATTEMPTS = """\
import os, sys
for path in sys.argv[1:]:
    try:
        if os.path.isfile(os.path.dirname(path)):
            os.remove(os.path.dirname(path))  # a file in the way of the folder: removed first
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        open(path, "w").write("planted")
        print(path, "made")
    except OSError as exc:
        print(path, "refused:", exc.strerror)
"""


def shell(workspace: Workspace, timeout: float = 60) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(ShellTool(workspace, CommandPolicy(allowed_programs=("python3",), timeout=timeout)).tool())
    return registry


# Missing protected files: directly in the workspace, behind a missing folder, in an existing folder, behind a file.
MISSING = ["toolsift.json", ".mcp.json", ".vscode/mcp.json", "app.env", "secrets/api.key", "config/prod.env", "x/y.env"]


def missing_files(ws: Path) -> Workspace:
    (ws / "config").mkdir()
    (ws / "x").write_text("a file where a folder would go\n", encoding="utf-8")
    return Workspace(ws, protected=[ProtectedPath(ws / name, "a protected file") for name in MISSING])


async def test_no_missing_protected_file_can_be_made_and_none_is_left_behind(ws: Path) -> None:
    (ws / "attempts.py").write_text(ATTEMPTS, encoding="utf-8")
    workspace = missing_files(ws)
    before = sorted(path.name for path in ws.iterdir())
    result = await shell(workspace).execute(
        "exec_shell", {"command": f"python3 attempts.py {' '.join(MISSING)}"}, permissions=EXECUTE
    )
    assert "made" not in result.text_content() and result.text_content().count("refused:") == len(MISSING)
    assert sorted(path.name for path in ws.iterdir()) == before  # no placeholder left behind
    assert list((ws / "config").iterdir()) == []
    assert (ws / "x").read_text(encoding="utf-8") == "a file where a folder would go\n"


WAIT_THEN_PLANT = """\
import os, time
open("waiting", "w").close()
while not os.path.exists("go"):
    time.sleep(0.01)
try:
    open("app.env", "w").write("planted")
    print("made")
except OSError as exc:
    print("refused:", exc.strerror)
"""


async def test_a_run_that_ends_first_leaves_an_overlapping_runs_placeholder_in_place(ws: Path) -> None:
    (ws / "plant.py").write_text(WAIT_THEN_PLANT, encoding="utf-8")
    registry = shell(missing_files(ws))
    late: list[ToolResult] = []

    async def run_late() -> None:
        late.append(await registry.execute("exec_shell", {"command": "python3 plant.py"}, permissions=EXECUTE))

    async with anyio.create_task_group() as group:
        group.start_soon(run_late)
        await poll_until(lambda: (ws / "waiting").exists())
        quick = await registry.execute("exec_shell", {"command": "python3 -c pass"}, permissions=EXECUTE)
        assert not quick.is_error
        (ws / "go").touch()
    assert "refused: Is a directory" in late[0].text_content()
    assert not os.path.lexists(ws / "app.env")


FORK_AND_WAIT = """\
import os, sys, time
if os.fork() == 0:
    while not os.path.exists("go"):
        time.sleep(0.01)
    open("app.env", "w").write("planted")
    sys.exit()
time.sleep(float(sys.argv[1]))
"""


async def test_nothing_of_a_sandbox_outlives_its_call_to_plant_once_the_placeholder_is_gone(ws: Path) -> None:
    (ws / "fork.py").write_text(FORK_AND_WAIT, encoding="utf-8")
    marker = marked_seconds(600)
    result = await shell(missing_files(ws), timeout=2).execute(
        "exec_shell", {"command": f"python3 fork.py {marker}"}, permissions=EXECUTE
    )
    assert result.is_error and "time budget" in result.text_content()
    assert running_with(marker) == []  # the child waiting for "go" died with the sandbox, before the call returned
    (ws / "go").touch()
    assert not os.path.lexists(ws / "app.env")
