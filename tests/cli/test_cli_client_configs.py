"""Other clients' config files in use: found without -c, their servers started, and what the CLI says about them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from cli_helpers import Piped

from toolsift._folders import find_config
from toolsift.cli import main
from toolsift.registry import TurnScope
from toolsift.toolbox import Toolbox

ROOT = Path(__file__).resolve().parents[2]
GENERAL = ROOT / "examples" / "servers" / "general.py"
CLINE = ROOT / "tests" / "fixtures" / "client_configs" / "cline" / "cline_mcp_settings.json"
HINT = "server(s) are internal"


@pytest.fixture
def python_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Client files say ``python``, as people write them: make it the interpreter running the tests."""
    folder = tmp_path / "bin"
    folder.mkdir()
    wrapper = folder / "python"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    captured = capsys.readouterr()
    return int(info.value.code or 0), captured.out, captured.err


def mcp_json(folder: Path, servers: dict[str, object]) -> Path:
    path = folder / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


async def test_cline_file_servers_start_and_answer(
    python_on_path: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the fixture's arguments are relative to the project, as Cline users write them
    async with Toolbox.from_config(CLINE, user_skills_dir=tmp_path) as box:
        states = {row.server: row.state.value for row in box.sessions.status()}
        assert states == {"general": "ready", "flow": "ready"}
        assert set(box.sessions.skipped) == {"search", "events"}  # "disabled": true
        assert box.sessions["general"].config.tool_timeout == 120
        result = await box.registry.execute(
            "general__echo", {"text": "hi from cline"}, TurnScope(skill_allowed=("general__*",))
        )
        assert not result.is_error and "hi from cline" in result.text_content()


async def test_env_file_values_reach_the_server_process(python_on_path: None, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text('GREETING="hello from .env"\n')
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".cursor" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"general": {"command": "python", "args": [str(GENERAL)], "envFile": ".env"}}})
    )
    async with Toolbox.from_config(tmp_path / ".cursor" / "mcp.json", user_skills_dir=tmp_path) as box:
        assert "hello" not in repr(box.config)
        result = await box.registry.execute(
            "general__env_get", {"name": "GREETING"}, TurnScope(skill_allowed=("general__*",))
        )
        # The server echoed the file's value exactly: it is masked like every value toolsift injected.
        assert not result.is_error and "[redacted]" in result.text_content()
        assert "hello from .env" not in result.text_content()


def test_find_config_takes_toolsift_json_then_client_project_files_then_the_user_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    user = tmp_path / "xdg" / "toolsift" / "toolsift.json"
    user.parent.mkdir(parents=True)
    user.write_text("{}")
    assert find_config() == user
    for name in (".cursor/mcp.json", ".vscode/mcp.json", ".mcp.json", "toolsift.json"):
        file = tmp_path / name
        file.parent.mkdir(exist_ok=True)
        file.write_text("{}")
        assert find_config() == file


@pytest.mark.usefixtures("general_in_process")
def test_servers_lists_dropped_and_disabled_servers_and_exits_4(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = mcp_json(
        tmp_path,
        {
            "general": {"command": sys.executable, "args": [str(GENERAL)], "internalOnly": False},
            "broken": {"command": "x", "timeout": -1},
            "off": {"command": "y", "disabled": True},
        },
    )
    line = next(n for n, text in enumerate(config.read_text().splitlines(), start=1) if '"timeout"' in text)
    code, out, err = run(capsys, "-c", str(config), "servers", "--json")
    rows = {row["server"]: row for row in json.loads(out)}
    assert code == 4
    assert rows["general"]["state"] == "ready"
    assert rows["broken"]["state"] == "dropped"
    assert rows["broken"]["error"] == f"line {line}: mcpServers.broken.timeout: expected greater than 0, found -1"
    assert rows["off"]["state"] == "disabled" and rows["off"]["error"] is None
    assert f"server 'broken' was left out: line {line}" in err
    assert HINT not in err  # every running server is global: no hint
    code, out, _ = run(capsys, "-c", str(config), "servers")
    assert code == 4
    broken = next(line for line in out.splitlines() if line.startswith("broken"))
    assert "dropped" in broken and "expected greater than 0" in broken


@pytest.mark.usefixtures("general_in_process")
def test_check_and_servers_say_how_to_reach_internal_servers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A Claude Desktop style file: every server is internal by default.
    config = mcp_json(tmp_path, {"general": {"command": sys.executable, "args": [str(GENERAL)]}})
    code, out, _ = run(capsys, "-c", str(config), "check")
    assert code == 0
    hint = next(line for line in out.splitlines() if line.startswith("hint"))
    assert "1 of 1 server(s) are internal (general)" in hint and "allowed-tools: [general__*]" in hint
    assert '"toolDiscovery": "search"' in hint and '"internalOnly": false' in hint
    assert "(read as a claude file): OK" in out
    code, out, _ = run(capsys, "-c", str(config), "check", "--json")
    report = json.loads(out)
    assert report["format"] == "claude" and len(report["hints"]) == 1
    code, _, err = run(capsys, "-c", str(config), "servers")
    assert code == 0 and "1 of 1 server(s) are internal (general)" in err


def test_check_has_no_hint_when_every_server_is_global(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = mcp_json(
        tmp_path, {"general": {"command": "x", "internalOnly": False}, "off": {"command": "y", "enabled": False}}
    )
    code, out, _ = run(capsys, "-c", str(config), "check", "--json")
    assert code == 0 and json.loads(out)["hints"] == []
    code, out, _ = run(capsys, "-c", str(config), "check")
    assert HINT not in out


@pytest.mark.usefixtures("general_in_process")
def test_chat_start_line_says_how_to_reach_internal_servers(tmp_path: Path) -> None:
    config = mcp_json(tmp_path, {"general": {"command": sys.executable, "args": [str(GENERAL)]}})
    chat = Piped("/quit")
    assert chat.run("-c", str(config), "chat") == 0, chat.err.text
    assert "1 of 1 server(s) are internal (general)" in chat.err.text
