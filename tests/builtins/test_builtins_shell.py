"""``exec_shell`` and its command policy: allowlist, no shell, timeout, output cap, process groups."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from pydantic import ValidationError

from toolsift import PolicyDenied
from toolsift.builtins import SHELL_METACHARACTERS, CommandPolicy, ShellTool, Workspace
from toolsift.registry import AuditEvent, Level, Permissions, ToolRegistry

EXECUTE = Permissions(level=Level.EXECUTE)
PYTHON = sys.executable


def script(workspace: Path, name: str, source: str) -> str:
    """A command running ``source`` as a Python script (commands cannot hold ';' or quotes-with-newlines)."""
    (workspace / name).write_text(source, encoding="utf-8")
    return f"{PYTHON} {name}"


def shell(workspace: Path, **policy: object) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(ShellTool(Workspace(workspace), CommandPolicy.model_validate(policy)).tool())
    return registry


def test_policy_without_programs_explains_how_to_allow_them() -> None:
    with pytest.raises(PolicyDenied, match=r"no program may run.*serve\.commands\.allowedPrograms"):
        CommandPolicy().parse("ls -la")


def test_policy_refuses_programs_off_the_allowlist() -> None:
    policy = CommandPolicy(allowed_programs=("git",))
    assert policy.parse("git log --oneline") == ["git", "log", "--oneline"]
    with pytest.raises(PolicyDenied, match=r"'rm' is not on the allowlist \(git\)"):
        policy.parse("rm -rf /")
    with pytest.raises(PolicyDenied, match="'/usr/bin/git' is not on the allowlist"):
        policy.parse("/usr/bin/git status")


@pytest.mark.parametrize("meta", SHELL_METACHARACTERS)
def test_policy_refuses_shell_metacharacters(meta: str) -> None:
    with pytest.raises(PolicyDenied, match="only a shell understands"):
        CommandPolicy(allowed_programs=("echo",)).parse(f"echo a{meta}b")


@pytest.mark.parametrize("command", ["", "   ", None, 42, ["echo"]])
def test_policy_refuses_non_commands(command: object) -> None:
    with pytest.raises(PolicyDenied, match="expected a non-empty command line string"):
        CommandPolicy(allowed_programs=("echo",)).parse(command)


def test_policy_refuses_unbalanced_quotes() -> None:
    with pytest.raises(PolicyDenied, match="cannot split 'echo \"a' into words: No closing quotation"):
        CommandPolicy(allowed_programs=("echo",)).parse('echo "a')


@pytest.mark.parametrize("program", ["./run.sh", "bin/tool", "", " git"])
def test_policy_config_refuses_relative_program_paths(program: str) -> None:
    with pytest.raises(ValidationError, match="must be a bare name"):
        CommandPolicy(allowed_programs=(program,))


def test_policy_accepts_camel_case_keys() -> None:
    policy = CommandPolicy.model_validate({"allowedPrograms": ["ls"], "maxOutputBytes": 10, "timeout": 2})
    assert (policy.allowed_programs, policy.max_output_bytes, policy.timeout) == (("ls",), 10, 2.0)


async def test_exec_shell_runs_in_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("", encoding="utf-8")
    result = await shell(tmp_path, allowed_programs=["ls"]).execute("exec_shell", {"command": "ls"},
                                                                    permissions=EXECUTE)
    assert not result.is_error
    assert result.text_content() == "$ ls\nexit code 0\nmarker.txt\n"
    assert result.structured_content["exit_code"] == 0


async def test_exec_shell_metacharacters_are_literal_never_interpreted(tmp_path: Path) -> None:
    registry = shell(tmp_path, allowed_programs=[PYTHON])
    with pytest.raises(PolicyDenied, match="only a shell understands"):
        await registry.execute("exec_shell", {"command": f"{PYTHON} -c 'print(1)' && touch pwned"},
                               permissions=EXECUTE)
    assert not (tmp_path / "pwned").exists()


async def test_exec_shell_needs_execute_level(tmp_path: Path) -> None:
    from toolsift import PermissionDenied

    with pytest.raises(PermissionDenied, match="requires level execute"):
        await shell(tmp_path, allowed_programs=["ls"]).execute("exec_shell", {"command": "ls"})


async def test_exec_shell_nonzero_exit_is_an_error_with_stderr(tmp_path: Path) -> None:
    command = script(tmp_path, "fail.py", "import sys\nprint('out')\nsys.exit('bad thing')\n")
    result = await shell(tmp_path, allowed_programs=[PYTHON]).execute("exec_shell", {"command": command},
                                                                      permissions=EXECUTE)
    assert result.is_error
    assert "exit code 1\nout\n\n--- stderr ---\nbad thing" in result.text_content()


async def test_exec_shell_caps_output(tmp_path: Path) -> None:
    command = script(tmp_path, "loud.py", "print('x' * 5000)\n")
    registry = shell(tmp_path, allowed_programs=[PYTHON], max_output_bytes=100)
    result = await registry.execute("exec_shell", {"command": command}, permissions=EXECUTE)
    assert "[stdout truncated: 5,001 bytes, 100 shown]" in result.text_content()
    assert result.structured_content["truncated"] is True
    assert len(result.structured_content["stdout"]) == 100


async def test_exec_shell_timeout_kills_the_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    # The program starts a grandchild that would outlive it, then hangs.
    command = script(tmp_path, "hang.py", (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(60)\n"
    ))
    registry = shell(tmp_path, allowed_programs=[PYTHON], timeout=1)
    result = await registry.execute("exec_shell", {"command": command}, permissions=EXECUTE)
    assert result.is_error
    assert "timed out after 1s; its process group was killed" in result.text_content()
    grandchild = int(pid_file.read_text(encoding="utf-8"))
    with anyio.fail_after(5):
        while _alive(grandchild):
            await anyio.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child that its (killed) parent never reaped is a zombie: dead for our purpose.
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().split()[2] != "Z"


async def test_exec_shell_cancellation_kills_the_program(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    command = script(tmp_path, "wait.py",
                     f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)\n")
    registry = shell(tmp_path, allowed_programs=[PYTHON], timeout=60)
    async with anyio.create_task_group() as group:
        group.start_soon(registry.execute, "exec_shell", {"command": command}, None, EXECUTE)
        with anyio.fail_after(10):
            while not pid_file.exists() or not pid_file.read_text(encoding="utf-8"):
                await anyio.sleep(0.02)
        group.cancel_scope.cancel()
    assert not _alive(int(pid_file.read_text(encoding="utf-8")))


async def test_exec_shell_reports_allowed_program_missing_from_path(tmp_path: Path) -> None:
    registry = shell(tmp_path, allowed_programs=["toolsift-no-such-program"])
    result = await registry.execute("exec_shell", {"command": "toolsift-no-such-program"}, permissions=EXECUTE)
    assert result.text_content() == "exec_shell: the program 'toolsift-no-such-program' is allowed but was not " \
                                    "found on PATH"


async def test_exec_shell_reports_programs_that_cannot_start(tmp_path: Path) -> None:
    target = tmp_path / "not-executable"
    target.write_text("", encoding="utf-8")
    registry = shell(tmp_path, allowed_programs=[str(target)])
    result = await registry.execute("exec_shell", {"command": str(target)}, permissions=EXECUTE)
    assert result.is_error
    assert "cannot start" in result.text_content()


async def test_exec_shell_gets_a_minimal_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIFT_TEST_SECRET", "s3cret")
    monkeypatch.setenv("PATH", f"relative/bin{os.pathsep}{os.environ['PATH']}")
    env = shutil.which("env")
    assert env is not None
    # env runs other programs, so its built-in policy refuses it; "builtin": "none" lets it print the environment.
    registry = shell(tmp_path, allowed_programs=["env"], programs={"env": {"builtin": "none"}})
    result = await registry.execute("exec_shell", {"command": "env"}, permissions=EXECUTE)
    assert not result.is_error
    assert "TOOLSIFT_TEST_SECRET" not in result.text_content()
    assert "relative/bin" not in result.text_content()


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A workspace holding a git repository with one commit, a Python file and a tar archive."""
    git = shutil.which("git")
    tar = shutil.which("tar")
    if git is None or tar is None:
        pytest.skip("git and tar are needed")
    (tmp_path / "main.py").write_text("print('hi')\n", encoding="utf-8")
    subprocess.run([git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([git, "add", "main.py"], cwd=tmp_path, check=True)
    subprocess.run([git, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "first"],
                   cwd=tmp_path, check=True)
    subprocess.run([tar, "-cf", "x.tar", "main.py"], cwd=tmp_path, check=True)
    return tmp_path


@pytest.mark.parametrize(
    ("command", "argument"),
    [
        ("git -c 'alias.x=!touch pwned' x", "-c"),
        ("git ls-remote --upload-pack='touch pwned' .", "--upload-pack=touch pwned"),
        ("find . -exec touch pwned {} +", "-exec"),
        ("tar -xf x.tar --to-command='touch pwned'", "--to-command=touch pwned"),
    ],
)
async def test_exec_shell_refuses_options_that_run_commands(repository: Path, command: str, argument: str) -> None:
    registry = shell(repository, allowed_programs=["git", "find", "tar"])
    with pytest.raises(PolicyDenied, match=re.escape(f"the argument {argument!r} is refused because")):
        await registry.execute("exec_shell", {"command": command}, permissions=EXECUTE)
    assert not (repository / "pwned").exists()


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git status", "On branch"),
        ("git log -n 3 --format=%s", "first"),
        ("find . -name '*.py'", "./main.py"),
        ("tar -tf x.tar", "main.py"),
    ],
)
async def test_exec_shell_still_runs_ordinary_commands(repository: Path, command: str, expected: str) -> None:
    registry = shell(repository, allowed_programs=["git", "find", "tar"])
    result = await registry.execute("exec_shell", {"command": command}, permissions=EXECUTE)
    assert not result.is_error, result.text_content()
    assert expected in result.structured_content["stdout"]


async def test_exec_shell_argument_refusals_are_audited(tmp_path: Path) -> None:
    registry = shell(tmp_path, allowed_programs=["git"])
    events: list[AuditEvent] = []
    registry.audit.subscribe(events.append)
    with pytest.raises(PolicyDenied, match="git: the argument '-c' is refused"):
        await registry.execute("exec_shell", {"command": "git -c core.pager=cat log"}, permissions=EXECUTE)
    assert [(event.kind, event.tool) for event in events] == [("tool.failed", "exec_shell")]
    assert events[0].reason is not None
    assert "git: the argument '-c' is refused because it sets git configuration" in events[0].reason


async def test_exec_shell_confines_git_to_the_workspace_through_links(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "out").symlink_to(tmp_path)
    registry = shell(workspace, allowed_programs=["git"])
    with pytest.raises(PolicyDenied, match=r"'-C out' is refused because it points git outside the workspace"):
        await registry.execute("exec_shell", {"command": "git -C out status"}, permissions=EXECUTE)
