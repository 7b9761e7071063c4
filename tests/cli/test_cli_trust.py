"""A config found in the current folder starts nothing until the person running toolsift trusts it."""

from __future__ import annotations

import builtins
import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from anyio.streams.text import TextReceiveStream
from test_cli import SERVERS, run
from trust_helpers import marker_server

from toolsift._folders import user_config_path
from toolsift.cli._app import state
from toolsift.config import ProjectTrust, load_config

GENERAL = {
    "command": sys.executable,
    "args": [str(SERVERS / "general.py")],
    "internalOnly": False,
    "env": {"API_TOKEN": "s3cret-value-123"},
}


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, general_in_process: None) -> Path:
    """A cloned project with its own .mcp.json, as the current folder; the trust store starts empty.

    Its ``general`` server runs in this process (in a ``toolsift`` child process, as configured); what a
    config may launch shows in the real processes of marker servers.
    """
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("TOOLSIFT_TRUST_PROJECT", raising=False)
    monkeypatch.delenv("TOOLSIFT_CONFIG", raising=False)
    folder = tmp_path / "repo"
    folder.mkdir()
    write(folder, {"general": GENERAL})
    monkeypatch.chdir(folder)
    yield folder
    state.trust_project = False  # the CLI's global state outlives one in-process run


def write(folder: Path, servers: dict[str, object]) -> Path:
    path = folder / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def store() -> Path:
    return user_config_path().parent / "trusted-projects.json"


def test_an_untrusted_project_config_starts_nothing_and_says_how_to_trust_it(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    marker = project / "started"
    write(project, {"marker": {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}})
    code, _, err = run(capsys, "tools")
    assert code == 4
    assert (
        f"{project / '.mcp.json'}: this file came with this project, and you have not trusted here what it does:\n"
        f"MCP servers it starts:\n  marker: {sys.executable} -c"
    ) in err
    assert "Run 'toolsift trust' in this folder" in err and "--trust-project" in err
    assert "TOOLSIFT_TRUST_PROJECT=1" in err and err.count(str(project / ".mcp.json")) == 1
    assert not marker.exists()


def test_the_flag_and_the_variable_trust_for_one_run_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run(capsys, "--trust-project", "tools")
    assert code == 0 and "general__echo" in out and "for this run (--trust-project)" in err
    assert run(capsys, "tools")[0] == 4  # not remembered
    monkeypatch.setenv("TOOLSIFT_TRUST_PROJECT", "1")
    assert run(capsys, "tools")[0] == 0


def test_trust_is_remembered_and_asked_again_when_a_launch_changes(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    code, out, _ = run(capsys, "trust")
    assert code == 0 and f"general: {sys.executable} {SERVERS / 'general.py'}" in out
    assert run(capsys, "tools")[0] == 0
    assert "s3cret-value-123" not in store().read_text()  # fingerprints only, never values
    write(
        project,
        {
            "general": {**GENERAL, "env": {"API_TOKEN": "s3cret-value-123", "NODE_OPTIONS": "--require x"}},
            "other": GENERAL,
        },
    )
    code, _, err = run(capsys, "tools")
    assert code == 4
    assert "  other: " in err  # new
    assert "changed since you trusted them:\n  general: " in err


def test_revoke_forgets_the_trust(capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "trust")
    code, out, _ = run(capsys, "trust", "--revoke")
    assert code == 0 and "trust forgotten" in out
    assert run(capsys, "tools")[0] == 4
    assert "trust was never given" in run(capsys, "trust", "--revoke")[1]


@pytest.mark.parametrize(("answer", "code"), [("y", 0), ("n", 4), ("", 4)])
def test_at_a_terminal_the_person_is_asked_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, answer: str, code: int
) -> None:
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    questions: list[str] = []
    monkeypatch.setattr(builtins, "input", lambda prompt: questions.append(prompt) or answer)
    result = run(capsys, "tools")
    assert result[0] == code
    assert questions == ["Trust this project's config and use it? [y/N]: "]
    if code == 0:
        assert run(capsys, "tools")[0] == 0 and len(questions) == 1  # remembered: not asked again
    else:
        assert "not trusted; nothing was started" in result[2]


def test_a_named_config_and_the_user_config_need_no_trust(
    capsys: pytest.CaptureFixture[str], project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(capsys, "-c", str(project / ".mcp.json"), "tools")[0] == 0
    user = user_config_path()
    user.parent.mkdir(parents=True, exist_ok=True)  # the run above pinned the tools it listed there
    user.write_text(json.dumps({"tools": {"mcpServers": {"general": GENERAL}}}))
    elsewhere = tmp_path / "empty"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert run(capsys, "tools")[0] == 0


def test_serving_as_a_gateway_needs_trust_ahead_of_time(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "serve", "--gateway")
    assert code == 4 and "came with this project" in err


def test_a_broken_trust_store_is_named_and_left_alone(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    store().parent.mkdir(parents=True)
    for text in ("{not json", '{"projects": []}'):
        store().write_text(text)
        code, _, err = run(capsys, "tools")
        assert code == 4 and str(store()) in err and "fix or delete the file" in err
        assert store().read_text() == text


def test_fingerprints_follow_launches_only(project: Path) -> None:
    trust = ProjectTrust(store())
    path = project / ".mcp.json"
    trust.remember(load_config(path), path)
    write(project, {"general": {**GENERAL, "timeout": 5}, "off": {**GENERAL, "enabled": False}})
    assert trust.check(load_config(path), path).trusted  # a timeout or a disabled server launches nothing new
    assert not trust.revoke(project / "other.json")


SERVER_PY = """\
import pathlib, runpy, sys
{mark}sys.path.insert(0, {folder!r})
runpy.run_path({server!r}, run_name="__main__")
"""


def server_py(folder: Path, marker: Path | None = None) -> None:
    """``folder/server.py``: the example server, leaving ``marker`` behind first when given."""
    mark = f"pathlib.Path({str(marker)!r}).write_text('ran')\n" if marker else ""
    (folder / "server.py").write_text(
        SERVER_PY.format(mark=mark, folder=str(SERVERS), server=str(SERVERS / "general.py"))
    )


def test_a_linked_config_does_not_borrow_the_trust_of_its_target(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "A", tmp_path / "B"
    a.mkdir()
    b.mkdir()
    server_py(a)
    marker = tmp_path / "B-started"
    server_py(b, marker)
    entry = {"command": sys.executable, "args": ["server.py"], "internalOnly": False}
    (a / "toolsift.json").write_text(json.dumps({"tools": {"mcpServers": {"local": entry}}}))
    (b / "toolsift.json").symlink_to(Path("..") / "A" / "toolsift.json")
    monkeypatch.chdir(a)
    assert run(capsys, "trust")[0] == 0
    assert run(capsys, "servers")[0] == 0
    monkeypatch.chdir(b)  # the same file, but server.py (and the folder it runs in) are B's
    code, _, err = run(capsys, "servers")
    assert code == 4 and f"{b / 'toolsift.json'}: this file came with this project" in err
    assert f"MCP servers it starts:\n  local: {sys.executable} server.py" in err
    assert not marker.exists()
    assert run(capsys, "trust")[0] == 0
    assert run(capsys, "servers")[0] == 0 and marker.exists()


def test_an_edited_env_file_is_asked_about_again(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    (project / "server.env").write_text("LOG_LEVEL=info\n")
    write(project, {"general": {**GENERAL, "envFile": "server.env"}})
    assert run(capsys, "trust")[0] == 0
    assert run(capsys, "tools")[0] == 0
    with (project / "server.env").open("a") as env:
        env.write(f"PYTHONPATH={project}\n")
    code, _, err = run(capsys, "tools")
    assert code == 4 and "env file or URL) changed since you trusted them:\n  general: " in err


def serve(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``toolsift serve`` over stdio in ``project``, its client gone at once (stdin at its end)."""
    return subprocess.run(
        [sys.executable, "-m", "toolsift", *argv, "serve"],
        cwd=project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_serve_applies_no_setting_of_an_untrusted_project(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    (project / ".mcp.json").unlink()
    (project / "toolsift.json").write_text(
        json.dumps(
            {
                "agents": {"default": {"permissions": {"level": "execute"}}},
                "serve": {"commands": {"allowedPrograms": ["python3"]}},
            }
        )
    )
    # Refused before anything is served, and trusted, in this process; then served by the real command.
    code, _, err = run(capsys, "serve")
    assert code == 4, err
    assert (
        f"{project / 'toolsift.json'}: this file came with this project, and you have not trusted here what it does:\n"
        "settings that decide what agents and served models may do: agents, serve\n"
        "Nothing was started. Run 'toolsift trust' in this folder"
    ) in err
    code, out, err = run(capsys, "trust")
    assert code == 0, err
    assert "settings that decide what agents and served models may do: agents, serve" in out
    served = serve(project)
    assert served.returncode == 0, served.stderr


def test_serve_without_gateway_needs_no_trust_for_servers_it_does_not_start(project: Path) -> None:
    served = serve(project)  # .mcp.json: servers only, and no gateway to start them
    assert served.returncode == 0, served.stderr
    assert serve(project, "--trust-project").returncode == 0


async def test_serve_as_a_gateway_starts_no_program_an_edit_adds(project: Path) -> None:
    entry, marker = marker_server(project)
    command = [
        sys.executable,
        "-m",
        "toolsift",
        "--trust-project",
        "serve",
        "--gateway",
        "--transport",
        "http",
        "--port",
        "0",
    ]
    async with await anyio.open_process(command, cwd=project, stdin=subprocess.DEVNULL) as process:
        try:
            assert process.stderr is not None
            lines = TextReceiveStream(process.stderr)
            seen = ""

            async def wait_for(text: str) -> None:
                nonlocal seen
                if text in seen:
                    return
                async for chunk in lines:
                    seen += chunk
                    if text in seen:
                        return
                raise AssertionError(f"toolsift serve ended before saying {text!r}:\n{seen}")

            await wait_for("READY http://")
            write(project, {"general": GENERAL, "payload": entry})
            await wait_for("MCP server.untrusted payload: ")
            await wait_for("it is not started")
            assert not marker.exists()
        finally:
            process.terminate()
