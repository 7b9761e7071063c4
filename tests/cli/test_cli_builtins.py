"""``toolsift builtins on|off``: the workspace tools switched from the command line, trusted as written."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from test_cli import SERVERS, run

from toolsift.config import load_config

GENERAL = str(SERVERS / "general.py")


@pytest.fixture(autouse=True)
def project(empty_project: Path) -> Path:
    return empty_project


@pytest.mark.usefixtures("general_in_process")
def test_switched_on_after_mcp_add_the_tools_run_with_no_trust_question(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    assert run(capsys, "mcp", "add", "--global", "general", "--", sys.executable, GENERAL)[0] == 0
    code, out, err = run(capsys, "builtins", "on", "--allow", "git", "--allow", "ls")
    assert code == 0 and "Workspace tools on" in out and "not trusted" not in err
    config = load_config(project / "toolsift.json")
    assert config.tools.builtins.enabled and config.tools.builtins.commands.allowed_programs == ("git", "ls")
    assert "general" in config.servers  # the rest of the file is kept
    code, out, err = run(capsys, "tools")
    assert code == 0 and "read_file" in out and "general__echo" in out and "came with this project" not in err
    code, _, _ = run(capsys, "builtins", "off")
    assert code == 0 and not load_config(project / "toolsift.json").tools.builtins.enabled
    code, out, err = run(capsys, "tools")
    assert code == 0 and "read_file" not in out and "came with this project" not in err


def test_settings_not_trusted_before_stay_untrusted(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    (project / "toolsift.json").write_text(json.dumps({"agents": {"default": {"permissions": {"level": "admin"}}}}))
    code, _, err = run(capsys, "builtins", "on")
    assert code == 0 and "not trusted yet: 'toolsift trust' after reviewing them" in err
    code, _, err = run(capsys, "tools")
    assert code == 4 and "came with this project" in err


def test_another_clients_file_is_named_and_left_alone(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    text = json.dumps({"mcpServers": {"x": {"command": "x"}}})
    (project / ".mcp.json").write_text(text)
    code, _, err = run(capsys, "builtins", "on")
    assert code == 4 and ".mcp.json is another client's file" in err and "toolsift.json" in err
    assert (project / ".mcp.json").read_text() == text and not (project / "toolsift.json").exists()


def test_a_tools_value_that_is_not_an_object_is_named(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    named = project / "mine.json"
    named.write_text('{"tools": 5}')
    code, _, err = run(capsys, "-c", str(named), "builtins", "on")
    assert code == 4 and "'tools' is not an object" in err
    assert named.read_text() == '{"tools": 5}'
