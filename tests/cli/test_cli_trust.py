"""A config found in the current folder starts nothing until the person running toolsift trusts it."""

from __future__ import annotations

import builtins
import json
import sys
from pathlib import Path

import pytest
from test_cli import SERVERS, run

from toolsift.cli._app import state
from toolsift.config import ProjectTrust, load_config
from toolsift.toolbox import user_config_path

GENERAL = {"command": sys.executable, "args": [str(SERVERS / "general.py")], "internalOnly": False,
           "env": {"API_TOKEN": "s3cret-value-123"}}


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cloned project with its own .mcp.json, as the current folder; the trust store starts empty."""
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
    assert f"{project / '.mcp.json'} came with this project and starts MCP servers you have not trusted" in err
    assert f"marker: {sys.executable} -c" in err
    assert "Run 'toolsift trust' in this folder" in err and "--trust-project" in err
    assert "TOOLSIFT_TRUST_PROJECT=1" in err
    assert not marker.exists()


def test_the_flag_and_the_variable_trust_for_one_run_only(capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run(capsys, "--trust-project", "tools")
    assert code == 0 and "general__echo" in out and "for this run (--trust-project)" in err
    assert run(capsys, "tools")[0] == 4  # not remembered
    monkeypatch.setenv("TOOLSIFT_TRUST_PROJECT", "1")
    assert run(capsys, "tools")[0] == 0


def test_trust_is_remembered_and_asked_again_when_a_launch_changes(capsys: pytest.CaptureFixture[str],
                                                                   project: Path) -> None:
    code, out, _ = run(capsys, "trust")
    assert code == 0 and f"general: {sys.executable} {SERVERS / 'general.py'}" in out
    assert run(capsys, "tools")[0] == 0
    assert "s3cret-value-123" not in store().read_text()  # fingerprints only, never values
    write(project, {"general": {**GENERAL, "env": {"API_TOKEN": "s3cret-value-123", "NODE_OPTIONS": "--require x"}},
                    "other": GENERAL})
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
def test_at_a_terminal_the_person_is_asked_once(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                                answer: str, code: int) -> None:
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    questions: list[str] = []
    monkeypatch.setattr(builtins, "input", lambda prompt: questions.append(prompt) or answer)
    result = run(capsys, "tools")
    assert result[0] == code
    assert questions == ["Trust this project's servers and start them? [y/N]: "]
    if code == 0:
        assert run(capsys, "tools")[0] == 0 and len(questions) == 1  # remembered: not asked again
    else:
        assert "not trusted; nothing was started" in result[2]


def test_a_named_config_and_the_user_config_need_no_trust(capsys: pytest.CaptureFixture[str], project: Path,
                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run(capsys, "-c", str(project / ".mcp.json"), "tools")[0] == 0
    user = user_config_path()
    user.parent.mkdir(parents=True)
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
