"""``exec_shell`` and its command policy: allowlist, no shell, sandbox, time and output budgets."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import pytest
from pydantic import ValidationError
from sandbox_helpers import BWRAP, marked_seconds, needs_bwrap, wait_gone, wait_running

from toolsift import ConfigError, PolicyDenied
from toolsift.builtins import CommandPolicy, Workspace
from toolsift.builtins._commands import SHELL_METACHARACTERS
from toolsift.builtins._shell import ShellTool
from toolsift.config import load_config
from toolsift.registry import Level, Permissions, ToolRegistry
from toolsift.registry._internal import AuditEvent

EXECUTE = Permissions(level=Level.EXECUTE)


def script(workspace: Path, name: str, source: str) -> str:
    """A command running ``source`` as a Python script (commands cannot hold ';' or quotes-with-newlines)."""
    (workspace / name).write_text(source, encoding="utf-8")
    return f"python3 {name}"


def shell(workspace: Path, *, bwrap: str | None = None, **policy: object) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(ShellTool(Workspace(workspace), CommandPolicy.model_validate(policy), bwrap=bwrap).tool())
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
    policy = CommandPolicy.model_validate(
        {"allowedPrograms": ["ls"], "maxOutputBytes": 10, "timeout": 2, "network": True}
    )
    assert (policy.allowed_programs, policy.max_output_bytes, policy.timeout, policy.network) == (
        ("ls",),
        10,
        2.0,
        True,
    )
    assert CommandPolicy().network is False


def test_config_with_the_obsolete_argument_policies_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "toolsift.json"
    path.write_text(
        json.dumps(
            {"serve": {"commands": {"allowedPrograms": ["git"], "programs": {"git": {"deniedWords": ["push"]}}}}}
        ),
        encoding="utf-8",
    )
    with pytest.raises(
        ConfigError,
        match=r"serve\.commands.*'programs': per-program argument policies are no "
        r"longer used: exec_shell now runs every program inside a bubblewrap "
        r"sandbox.*Remove 'programs'",
    ):
        load_config(path)


async def test_exec_shell_needs_execute_level(tmp_path: Path) -> None:
    from toolsift import PermissionDenied

    with pytest.raises(PermissionDenied, match="requires level execute"):
        await shell(tmp_path, allowed_programs=["ls"]).execute("exec_shell", {"command": "ls"})


async def test_exec_shell_metacharacters_are_literal_never_interpreted(tmp_path: Path) -> None:
    registry = shell(tmp_path, allowed_programs=["python3"])
    with pytest.raises(PolicyDenied, match="only a shell understands"):
        await registry.execute("exec_shell", {"command": "python3 -c 'print(1)' && touch pwned"}, permissions=EXECUTE)
    assert not (tmp_path / "pwned").exists()


async def test_exec_shell_is_refused_when_bubblewrap_is_missing(tmp_path: Path) -> None:
    registry = shell(tmp_path, allowed_programs=["touch"], bwrap=str(tmp_path / "no-such-bwrap"))
    result = await registry.execute("exec_shell", {"command": "touch ran"}, permissions=EXECUTE)
    assert result.is_error
    assert result.text_content() == (
        f"exec_shell is refused: bubblewrap was not found at "
        f"{str(tmp_path / 'no-such-bwrap')!r}; programs run only inside its sandbox"
    )
    assert not (tmp_path / "ran").exists()  # never run without the sandbox


async def test_exec_shell_is_refused_when_bubblewrap_is_not_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = await shell(tmp_path, allowed_programs=["touch"]).execute(
        "exec_shell", {"command": "touch ran"}, permissions=EXECUTE
    )
    assert result.text_content().startswith("exec_shell is refused: bubblewrap (bwrap) is not installed")
    assert "apt-get install bubblewrap" in result.text_content()
    assert not (tmp_path / "ran").exists()


@needs_bwrap
async def test_exec_shell_is_refused_when_bubblewrap_cannot_make_a_sandbox(tmp_path: Path) -> None:
    # The real bwrap, started inside an outer sandbox that forbids new user namespaces: it cannot make its own.
    confined = tmp_path / "bwrap"
    confined.write_text(
        f'#!/bin/sh\nexec {BWRAP} --unshare-user --disable-userns --cap-drop ALL --dev-bind / / -- {BWRAP} "$@"\n',
        encoding="utf-8",
    )
    confined.chmod(0o755)
    result = await shell(tmp_path, allowed_programs=["touch"], bwrap=str(confined)).execute(
        "exec_shell", {"command": "touch ran"}, permissions=EXECUTE
    )
    assert result.is_error
    assert re.fullmatch(
        rf"exec_shell is refused: bubblewrap \({re.escape(repr(str(confined)))}\) cannot make a "
        r"sandbox here: it exited with code 1 and said 'bwrap: Creating new namespace failed: .*'",
        result.text_content(),
    ), result.text_content()
    assert not (tmp_path / "ran").exists()


@needs_bwrap
async def test_exec_shell_runs_in_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("", encoding="utf-8")
    result = await shell(tmp_path, allowed_programs=["ls"]).execute(
        "exec_shell", {"command": "ls"}, permissions=EXECUTE
    )
    assert not result.is_error
    assert result.text_content() == "$ ls\nexit code 0\nmarker.txt\n"
    assert result.structured_content["exit_code"] == 0


@needs_bwrap
async def test_exec_shell_writes_land_in_the_workspace(tmp_path: Path) -> None:
    result = await shell(tmp_path, allowed_programs=["touch"]).execute(
        "exec_shell", {"command": "touch made"}, permissions=EXECUTE
    )
    assert not result.is_error, result.text_content()
    assert (tmp_path / "made").is_file()


@needs_bwrap
async def test_exec_shell_nonzero_exit_is_an_error_with_stderr(tmp_path: Path) -> None:
    command = script(tmp_path, "fail.py", "import sys\nprint('out')\nsys.exit('bad thing')\n")
    result = await shell(tmp_path, allowed_programs=["python3"]).execute(
        "exec_shell", {"command": command}, permissions=EXECUTE
    )
    assert result.is_error
    assert "exit code 1\nout\n\n--- stderr ---\nbad thing" in result.text_content()


@needs_bwrap
async def test_exec_shell_output_budget_truncates_with_a_note(tmp_path: Path) -> None:
    command = script(tmp_path, "loud.py", "print('x' * 5000)\n")
    registry = shell(tmp_path, allowed_programs=["python3"], max_output_bytes=100)
    result = await registry.execute("exec_shell", {"command": command}, permissions=EXECUTE)
    assert "[stdout truncated: 5,001 bytes, 100 shown]" in result.text_content()
    assert result.structured_content["truncated"] is True
    assert len(result.structured_content["stdout"]) == 100


@needs_bwrap
async def test_exec_shell_time_budget_kills_the_sandbox_and_its_children(tmp_path: Path) -> None:
    marker = marked_seconds(98765)
    # The program starts a grandchild in a session of its own (it would outlive a process group), then hangs.
    command = script(
        tmp_path,
        "hang.py",
        (
            "import subprocess, time\n"
            f"subprocess.Popen(['sleep', '{marker}'], start_new_session=True)\n"
            "open('started', 'w').close()\n"
            "time.sleep(1000)\n"
        ),
    )
    # The budget must end after the grandchild started: a loaded machine may take longer than the first
    # budget to start Python in a sandbox, so the call is made again with twice the budget until it has.
    for budget in (3, 6, 12, 24, 48):
        registry = shell(tmp_path, allowed_programs=["python3"], timeout=budget)
        result = await registry.execute("exec_shell", {"command": command}, permissions=EXECUTE)
        if (tmp_path / "started").exists():
            break
    assert (tmp_path / "started").exists()  # the grandchild was running when the budget ran out
    assert result.is_error
    assert result.text_content() == (
        f"exec_shell: 'python3 hang.py' ran past its time budget of {budget}s; the sandbox and everything in it "
        "was killed"
    )
    assert result.structured_content["timed_out"] is True
    await wait_gone(marker)


@needs_bwrap
async def test_exec_shell_time_budget_stops_a_sleep(tmp_path: Path) -> None:
    marker = marked_seconds(1000)
    registry = shell(tmp_path, allowed_programs=["sleep"], timeout=1)
    result = await registry.execute("exec_shell", {"command": f"sleep {marker}"}, permissions=EXECUTE)
    assert "ran past its time budget of 1s" in result.text_content()
    await wait_gone(marker)


@needs_bwrap
async def test_exec_shell_cancellation_kills_the_sandbox(tmp_path: Path) -> None:
    marker = marked_seconds(600)
    registry = shell(tmp_path, allowed_programs=["sleep"], timeout=600)
    async with anyio.create_task_group() as group:
        group.start_soon(registry.execute, "exec_shell", {"command": f"sleep {marker}"}, None, EXECUTE)
        await wait_running(marker)
        group.cancel_scope.cancel()
    await wait_gone(marker)


@needs_bwrap
async def test_exec_shell_reports_allowed_program_missing_from_the_sandbox(tmp_path: Path) -> None:
    registry = shell(tmp_path, allowed_programs=["toolsift-no-such-program"])
    result = await registry.execute("exec_shell", {"command": "toolsift-no-such-program"}, permissions=EXECUTE)
    assert result.text_content() == (
        "exec_shell: the program 'toolsift-no-such-program' is allowed but was not "
        "found on the sandbox's PATH (/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:"
        "/usr/sbin:/sbin)"
    )


@needs_bwrap
async def test_exec_shell_refuses_absolute_programs_the_sandbox_does_not_show(tmp_path: Path) -> None:
    # A program in the workspace (or anywhere outside the system folders) is not in the sandbox's view.
    target = tmp_path / "tool"
    target.write_text("#!/bin/sh\ntouch ran\n", encoding="utf-8")
    target.chmod(0o755)
    registry = shell(tmp_path, allowed_programs=[str(target)])
    result = await registry.execute("exec_shell", {"command": str(target)}, permissions=EXECUTE)
    assert result.is_error
    assert result.text_content() == (
        f"exec_shell: the program {str(target)!r} is allowed but is not an executable "
        "under the system folders the sandbox shows (/usr)"
    )
    assert not (tmp_path / "ran").exists()


@needs_bwrap
async def test_exec_shell_runs_absolute_system_programs(tmp_path: Path) -> None:
    registry = shell(tmp_path, allowed_programs=["/usr/bin/touch"])
    result = await registry.execute("exec_shell", {"command": "/usr/bin/touch made"}, permissions=EXECUTE)
    assert not result.is_error, result.text_content()
    assert (tmp_path / "made").exists()


@needs_bwrap
async def test_exec_shell_gets_a_minimal_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIFT_TEST_SECRET", "s3cret")
    result = await shell(tmp_path, allowed_programs=["env"]).execute(
        "exec_shell", {"command": "env"}, permissions=EXECUTE
    )
    assert not result.is_error, result.text_content()
    variables = dict(line.split("=", 1) for line in result.structured_content["stdout"].splitlines())
    assert "TOOLSIFT_TEST_SECRET" not in variables
    assert variables["PATH"] == "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
    assert variables["HOME"] == "/tmp"


@needs_bwrap
async def test_exec_shell_failures_are_audited(tmp_path: Path) -> None:
    registry = shell(tmp_path, allowed_programs=["git"])
    events: list[AuditEvent] = []
    registry.audit.subscribe(events.append)
    with pytest.raises(PolicyDenied, match="'rm' is not on the allowlist"):
        await registry.execute("exec_shell", {"command": "rm -rf ."}, permissions=EXECUTE)
    assert [(event.kind, event.tool) for event in events] == [("tool.failed", "exec_shell")]
