"""`toolsift mcp add|list|get|remove`: servers edited from the command line, files kept whole and valid."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_cli import SERVERS, run

from toolsift.cli._app import state
from toolsift.config import load_config
from toolsift.toolbox import Toolbox, user_config_path

GENERAL = str(SERVERS / "general.py")


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("TOOLSIFT_CONFIG", raising=False)
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    yield folder
    state.config = None  # the CLI's global state outlives one in-process run


async def test_an_added_stdio_server_loads_and_answers(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    code, out, _ = run(capsys, "mcp", "add", "general", "-e", "MODE=test", "--", sys.executable, GENERAL)
    assert code == 0 and f"Added stdio server 'general' to {project / 'toolsift.json'} (project)" in out
    config = load_config(project / "toolsift.json")
    assert config.servers["general"].command == sys.executable
    assert config.servers["general"].env == {"MODE": "test"}
    async with Toolbox(load_config(project / "toolsift.json")) as box:
        result = await box.registry.execute("general__add", {"a": 2, "b": 3}, permissions=None,
                                            scope=box.conversation().scope().with_unlocked(["general__add"]))
    assert "5" in result.text_content()


def test_a_remote_server_with_headers_keeps_the_rest_of_the_file(capsys: pytest.CaptureFixture[str],
                                                                 project: Path) -> None:
    original = {"agents": {"default": {"planMode": True}}, "tools": {"mcpServers": {"old": {"command": "x"}}},
                "audit": {"path": "a.jsonl"}}
    (project / "toolsift.json").write_text(json.dumps(original))
    code, _, _ = run(capsys, "mcp", "add", "--transport", "http", "remote", "https://example.com/mcp",
                     "-H", "Authorization: Bearer ${TOKEN}", "-H", "X-Team: tools")
    assert code == 0
    text = (project / "toolsift.json").read_text()
    data = json.loads(text)
    assert list(data) == ["agents", "tools", "audit"] and data["agents"] == original["agents"]
    assert data["tools"]["mcpServers"] == {"old": {"command": "x"}, "remote": {
        "type": "http", "url": "https://example.com/mcp",
        "headers": {"Authorization": "Bearer ${TOKEN}", "X-Team": "tools"}}}
    assert text.endswith("}\n") and '\n  "agents"' in text
    assert load_config(project / "toolsift.json").servers["remote"].transport == "http"


def test_a_projects_mcp_json_is_the_project_file(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {}}))
    assert run(capsys, "mcp", "add", "echo", "--", "echo", "hi")[0] == 0
    assert not (project / "toolsift.json").exists()
    assert json.loads((project / ".mcp.json").read_text()) == {"mcpServers": {"echo": {"command": "echo",
                                                                                       "args": ["hi"]}}}


def test_list_get_and_remove_across_scopes(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    run(capsys, "mcp", "add", "local", "-e", "API_KEY=plain-secret", "-e", "REF=${HOME}", "--", "echo", "1")
    run(capsys, "mcp", "add", "-s", "user", "mine", "--", "echo", "2")
    run(capsys, "mcp", "add", "-s", "user", "local", "--", "echo", "3")
    code, out, _ = run(capsys, "mcp", "list")
    assert code == 0
    assert "local\tproject\tstdio\techo 1\tyes" in out and "mine\tuser\tstdio\techo 2\tyes" in out
    code, out, _ = run(capsys, "mcp", "get", "local", "--scope", "project")
    assert code == 0 and "plain-secret" not in out and '"API_KEY": "***"' in out and '"REF": "${HOME}"' in out
    code, _, err = run(capsys, "mcp", "remove", "local")
    assert code == 2 and "in both the project and the user config; pass --scope" in err
    assert run(capsys, "mcp", "remove", "local", "-s", "user")[0] == 0
    assert run(capsys, "mcp", "remove", "local")[0] == 0
    assert "local" not in json.loads((project / "toolsift.json").read_text())["tools"]["mcpServers"]
    assert json.loads(user_config_path().read_text())["tools"]["mcpServers"] == {
        "mine": {"command": "echo", "args": ["2"]}}
    code, _, err = run(capsys, "mcp", "get", "nope")
    assert code == 3 and "no server 'nope'; configured: mine" in err


def test_a_named_file_is_the_one_edited(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    named = tmp_path / "elsewhere.json"
    assert run(capsys, "-c", str(named), "mcp", "add", "x", "--", "echo")[0] == 0
    assert json.loads(named.read_text()) == {"tools": {"mcpServers": {"x": {"command": "echo"}}}}
    code, out, _ = run(capsys, "-c", str(named), "mcp", "list")
    assert code == 0 and "x\tfile\tstdio\techo\tyes" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["bad__name", "--", "echo"], "must not contain '__'"),
    (["ok"], "missing the command after --"),
    (["-t", "http", "ok"], "missing the server's URL"),
    (["-t", "http", "ok", "ftp://x"], "expected one http:// or https:// URL"),
    (["-t", "carrier", "ok", "x"], "'carrier' is not one of 'stdio', 'http', 'sse'"),
    (["-e", "NOEQUALS", "ok", "--", "echo"], "'NOEQUALS' is not KEY=VALUE"),
    (["-t", "http", "-H", "Bad Name: x", "ok", "https://x"], "header name 'Bad Name' is not a valid HTTP field"),
    (["-H", "Authorization: x", "ok", "--", "echo"], "headers go with --transport http or sse"),
    (["-t", "http", "-H", "no colon", "ok", "https://x"], "'no colon' is not 'Name: value'"),
    (["-s", "team", "ok", "--", "echo"], "'team' is not one of 'project', 'user'"),
])
def test_bad_input_is_a_usage_error_and_writes_nothing(capsys: pytest.CaptureFixture[str], project: Path,
                                                       argv: list[str], message: str) -> None:
    code, _, err = run(capsys, "mcp", "add", *argv)
    assert code == 2 and message in err
    assert not (project / "toolsift.json").exists()


def test_a_duplicate_name_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "mcp", "add", "x", "--", "echo")
    code, _, err = run(capsys, "mcp", "add", "x", "--", "other")
    assert code == 2 and "already has a server 'x'; 'toolsift mcp remove x' first" in err


@pytest.mark.parametrize("text", ['{"tools": {\n  "mcpServers": {,}}}', "[1, 2]"])
def test_a_file_that_is_not_a_json_object_is_named_and_left_alone(capsys: pytest.CaptureFixture[str],
                                                                  project: Path, text: str) -> None:
    (project / "toolsift.json").write_text(text)
    code, _, err = run(capsys, "mcp", "add", "x", "--", "echo")
    assert code == 4 and str(project / "toolsift.json") in err and "left as it is" in err
    assert (project / "toolsift.json").read_text() == text


def test_nothing_configured_says_how_to_add(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "mcp", "list")
    assert code == 0 and "toolsift mcp add NAME -- CMD ARGS" in err
