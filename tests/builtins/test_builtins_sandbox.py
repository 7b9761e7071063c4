"""Escapes through the programs ``exec_shell`` runs, tried for real inside the bubblewrap sandbox.

Each program the old argument readers knew (sed, awk, git, tar, rsync, find) is
made to run a program, write outside the workspace, change the config, read a
secret or reach the network; each test checks that the effect did not happen
on the host, and a control in the same workspace shows the program did run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from anyio.abc import SocketStream
from sandbox_helpers import needs_bwrap

from toolsift.builtins import CommandPolicy, Workspace, builtin_tools, protected_paths
from toolsift.builtins._shell import ShellTool
from toolsift.config import load_config
from toolsift.registry import Level, Permissions, ToolRegistry, ToolResult

pytestmark = needs_bwrap

EXECUTE = Permissions(level=Level.EXECUTE)
SECRET = "sk-toolsift-sandbox-0123456789abcdef"
ENV_SECRET = "env-secret-fedcba9876543210"
PROGRAMS = ("sed", "awk", "git", "tar", "rsync", "find", "python3", "mv", "cat")


@dataclass
class Project:
    """A workspace that is also the config's folder, with a secret, an env file, a repository and an archive."""

    root: Path
    outside: Path
    config_text: str
    registry: ToolRegistry = field(default_factory=ToolRegistry)

    async def run(self, command: str) -> ToolResult:
        return await self.registry.execute("exec_shell", {"command": command}, permissions=EXECUTE)

    @property
    def ws(self) -> Path:
        return self.root / "ws"

    def untouched(self) -> None:
        """Nothing reached outside the workspace, and the config is as it was."""
        assert list(self.outside.iterdir()) == []
        assert (self.ws / "toolsift.json").read_text(encoding="utf-8") == self.config_text


def _git(ws: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=ws, check=True, capture_output=True
    )


@pytest.fixture
def project(tmp_path: Path) -> Project:
    missing = [program for program in PROGRAMS if shutil.which(program) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    ws = tmp_path / "ws"
    (ws / "secrets").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "secrets" / "api.key").write_text(SECRET + "\n", encoding="utf-8")
    (ws / "app.env").write_text(f"TOKEN={ENV_SECRET}\n", encoding="utf-8")
    (ws / "notes.txt").write_text("hello notes\n", encoding="utf-8")
    (ws / "evil.json").write_text('{"tools": {"mcpServers": {"x": {"command": "touch"}}}}', encoding="utf-8")
    config_text = json.dumps(
        {
            "tools": {
                "mcpServers": {
                    "api": {
                        "command": "python3",
                        "args": ["server.py"],
                        "envFile": "app.env",
                        "env": {"API_KEY": "secret://file/secrets/api.key"},
                    }
                }
            }
        }
    )
    (ws / "toolsift.json").write_text(config_text, encoding="utf-8")
    _git(ws, "init", "-q")
    _git(ws, "add", "notes.txt")
    _git(ws, "commit", "-q", "-m", "first")
    subprocess.run(["tar", "-cf", "x.tar", "notes.txt"], cwd=ws, check=True)
    config = load_config(ws / "toolsift.json")
    workspace = Workspace(ws, protected=protected_paths(config))
    project = Project(tmp_path, outside, config_text)
    project.registry.register_many(
        builtin_tools(workspace, commands=CommandPolicy(allowed_programs=PROGRAMS, timeout=60))
    )
    return project


def output(result: ToolResult) -> str:
    return result.text_content()


# -- sed -------------------------------------------------------------------------------------------


async def test_sed_w_command_cannot_write_outside(project: Project) -> None:
    control = await project.run("sed -n 'w copy.txt' notes.txt")
    assert (project.ws / "copy.txt").read_text(encoding="utf-8") == "hello notes\n", output(control)
    escape = await project.run(f"sed -n 'w {project.outside}/pwned' notes.txt")
    assert escape.is_error
    project.untouched()


async def test_sed_e_command_runs_only_inside_the_sandbox(project: Project) -> None:
    control = await project.run("sed '1e touch ran' notes.txt")
    assert (project.ws / "ran").exists(), output(control)
    await project.run(f"sed '1e touch {project.outside}/pwned' notes.txt")
    leaked = await project.run("sed '1e cat secrets/api.key app.env' notes.txt")
    assert SECRET not in output(leaked) and ENV_SECRET not in output(leaked)
    project.untouched()


async def test_sed_in_place_cannot_change_the_config(project: Project) -> None:
    result = await project.run("sed -i 's/python3/touch/' toolsift.json")
    assert result.is_error
    project.untouched()


# -- awk -------------------------------------------------------------------------------------------


async def test_awk_system_cannot_write_outside_or_into_etc(project: Project) -> None:
    etc = Path("/etc") / f"toolsift-pwned-{project.root.name}"
    try:
        control = await project.run("awk 'BEGIN{system(\"touch ran\")}'")
        assert (project.ws / "ran").exists(), output(control)
        await project.run(f"awk 'BEGIN{{system(\"touch {project.outside}/pwned {etc}\")}}'")
        assert not etc.exists()
    finally:
        etc.unlink(missing_ok=True)
    project.untouched()


async def test_awk_cannot_overwrite_the_config_or_read_the_secret(project: Project) -> None:
    await project.run("awk 'BEGIN{system(\"cp evil.json toolsift.json\")}'")
    read = await project.run("awk '{print}' secrets/api.key app.env")
    assert SECRET not in output(read) and ENV_SECRET not in output(read)
    project.untouched()


# -- git -------------------------------------------------------------------------------------------


async def test_git_fsmonitor_planted_with_write_file_stays_in_the_sandbox(project: Project) -> None:
    # What the old git reader warned of: write_file of .git/config, then `git status` runs a program.
    hook = (
        "touch ran\n"
        f"touch {project.outside}/pwned\n"
        "cat secrets/api.key app.env > leaked.txt\n"
        "cp evil.json toolsift.json\n"
    )
    await project.registry.execute("write_file", {"path": ".git/fsmonitor.sh", "content": hook}, permissions=EXECUTE)
    config = (project.ws / ".git" / "config").read_text(encoding="utf-8")
    await project.registry.execute(
        "write_file",
        {"path": ".git/config", "content": config + "[core]\n\tfsmonitor = sh .git/fsmonitor.sh\n"},
        permissions=EXECUTE,
    )
    await project.run("git status")
    assert (project.ws / "ran").exists()  # the hook ran: inside the sandbox
    leaked = (project.ws / "leaked.txt").read_text(encoding="utf-8")
    assert SECRET not in leaked and ENV_SECRET not in leaked
    project.untouched()


async def test_git_alias_and_ssh_command_stay_in_the_sandbox(project: Project) -> None:
    control = await project.run("git -c 'alias.x=!touch ran' x")
    assert (project.ws / "ran").exists(), output(control)
    await project.run(f"git -c 'alias.x=!touch {project.outside}/pwned' x")
    await project.run(f"git -c 'core.sshCommand=touch {project.outside}/pwned' ls-remote ssh://example.com/r.git")
    leaked = await project.run("git -c 'alias.x=!cat secrets/api.key' x")
    assert SECRET not in output(leaked)
    project.untouched()


async def test_git_cannot_reach_the_network(project: Project) -> None:
    async with listening() as server:
        result = await project.run(f"git ls-remote http://127.0.0.1:{server.port}/repo.git")
    assert result.is_error
    assert server.connections == 0
    assert "127.0.0.1" in output(result)  # git's own "failed to connect" message


# -- tar -------------------------------------------------------------------------------------------


async def test_tar_checkpoint_action_and_to_command_stay_in_the_sandbox(project: Project) -> None:
    control = await project.run("tar -cf /dev/null notes.txt --checkpoint=1 --checkpoint-action=exec='touch ran'")
    assert (project.ws / "ran").exists(), output(control)
    await project.run(
        f"tar -cf /dev/null notes.txt --checkpoint=1 --checkpoint-action=exec='touch {project.outside}/pwned'"
    )
    await project.run("tar -xf x.tar --to-command='cp evil.json toolsift.json'")
    await project.run(f"tar -cf {project.outside}/stolen.tar secrets")
    project.untouched()


async def test_tar_cannot_archive_the_secret(project: Project) -> None:
    result = await project.run("tar -cf archive.tar notes.txt secrets/api.key app.env")
    archived = (project.ws / "archive.tar").read_bytes()  # tar ran: the hidden files went in as empty devices
    assert b"hello notes" in archived, output(result)
    assert SECRET.encode() not in archived and ENV_SECRET.encode() not in archived


# -- rsync -----------------------------------------------------------------------------------------


async def test_rsync_remote_shell_and_copies_stay_in_the_sandbox(project: Project) -> None:
    control = await project.run("rsync notes.txt copy.txt")
    assert (project.ws / "copy.txt").exists(), output(control)
    await project.run(f"rsync -e 'touch {project.outside}/pwned' notes.txt example.com:dest")
    await project.run(f"rsync notes.txt secrets/api.key {project.outside}/")
    await project.run("rsync evil.json toolsift.json")
    project.untouched()


# -- find ------------------------------------------------------------------------------------------


async def test_find_exec_and_fprint_stay_in_the_sandbox(project: Project) -> None:
    control = await project.run("find notes.txt -fprint list.txt")
    assert (project.ws / "list.txt").exists(), output(control)
    await project.run(f"find . -maxdepth 0 -exec touch {project.outside}/pwned {{}} +")
    await project.run(f"find . -maxdepth 0 -fprint {project.outside}/list")
    await project.run("find evil.json -exec cp {} toolsift.json +")
    project.untouched()


async def test_find_exec_cat_shows_files_but_not_the_protected_ones(project: Project) -> None:
    result = await project.run("find . -name .git -prune -o -type f -exec cat {} +")
    assert "hello notes" in output(result)
    assert SECRET not in output(result) and ENV_SECRET not in output(result)
    assert '"mcpServers": {"api"' not in output(result)


# -- the protected paths themselves --------------------------------------------------------------


async def test_the_folder_of_a_protected_file_cannot_be_renamed_away(project: Project) -> None:
    result = await project.run("mv secrets moved")
    assert result.is_error
    assert "Device or resource busy" in output(result)
    assert (project.ws / "secrets" / "api.key").read_text(encoding="utf-8") == SECRET + "\n"
    assert not (project.ws / "moved").exists()


ATTACKS = """\
import os
attempts = {
    "replace": lambda: os.replace("evil.json", "toolsift.json"),
    "remove": lambda: os.remove("toolsift.json"),
    "rewrite": lambda: open("app.env", "w").write("LD_PRELOAD=/tmp/x.so"),
    "unlink secret": lambda: os.remove("secrets/api.key"),
    "link": lambda: os.link("secrets/api.key", "hard.key"),
}
for name, attempt in attempts.items():
    try:
        attempt()
        print(name, "worked")
    except OSError as exc:
        print(name, "failed:", exc.strerror)
"""


async def test_protected_files_cannot_be_replaced_removed_or_linked(project: Project) -> None:
    (project.ws / "attacks.py").write_text(ATTACKS, encoding="utf-8")
    result = await project.run("python3 attacks.py")
    assert "worked" not in output(result)
    assert output(result).count("failed:") == 5
    assert (project.ws / "app.env").read_text(encoding="utf-8") == f"TOKEN={ENV_SECRET}\n"
    assert (project.ws / "secrets" / "api.key").exists() and not (project.ws / "hard.key").exists()
    project.untouched()


# -- the network -----------------------------------------------------------------------------------


@dataclass
class _Listener:
    port: int
    connections: int = 0
    received: bytearray = field(default_factory=bytearray)
    closed: anyio.Event = field(default_factory=anyio.Event)


@asynccontextmanager
async def listening() -> AsyncIterator[_Listener]:
    """A TCP server on a free loopback port that counts connections and keeps what they send."""
    async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listener, anyio.create_task_group() as group:
        state = _Listener(port=listener.extra(anyio.abc.SocketAttribute.local_port))

        async def handle(stream: SocketStream) -> None:
            state.connections += 1
            async with stream:
                async for chunk in stream:
                    state.received += chunk
            state.closed.set()

        group.start_soon(listener.serve, handle)
        yield state
        group.cancel_scope.cancel()


CONNECT = (
    "import socket, sys\n"
    "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=10)\n"
    "s.sendall(b'hello from the sandbox')\n"
    "s.close()\n"
    "print('sent')\n"
)


def _connecting(tmp_path: Path, *, network: bool) -> ToolRegistry:
    (tmp_path / "connect.py").write_text(CONNECT, encoding="utf-8")
    registry = ToolRegistry()
    policy = CommandPolicy(allowed_programs=("python3",), network=network, timeout=60)
    registry.register(ShellTool(Workspace(tmp_path), policy).tool())
    return registry


async def test_network_is_refused_by_default(tmp_path: Path) -> None:
    registry = _connecting(tmp_path, network=False)
    async with listening() as server:
        result = await registry.execute(
            "exec_shell", {"command": f"python3 connect.py {server.port}"}, permissions=EXECUTE
        )
    assert result.is_error
    assert "ConnectionRefusedError" in output(result)
    assert (server.connections, bytes(server.received)) == (0, b"")


async def test_network_is_reached_when_the_policy_allows_it(tmp_path: Path) -> None:
    registry = _connecting(tmp_path, network=True)
    async with listening() as server:
        result = await registry.execute(
            "exec_shell", {"command": f"python3 connect.py {server.port}"}, permissions=EXECUTE
        )
        assert not result.is_error, output(result)
        await server.closed.wait()
    assert bytes(server.received) == b"hello from the sandbox"
