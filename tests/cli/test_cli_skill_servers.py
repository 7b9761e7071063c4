"""``toolsift tools --skill S`` and ``schemas --skill S`` start the servers the skill brings, as ``/use`` does."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from test_cli import SERVERS, run


def skill_with_its_own_server(folder: Path) -> Path:
    """A config whose one skill brings its server (``calc``, the example general server) in a ``.mcp.json``."""
    skill = folder / "skills" / "adder"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: adder\ndescription: Adds.\nallowed-tools: calc__add\n---\nAdd.\n")
    server = {"command": sys.executable, "args": [str(SERVERS / "general.py")]}
    (skill / ".mcp.json").write_text(json.dumps({"mcpServers": {"calc": server}}))
    config = folder / "mine.json"
    config.write_text(json.dumps({"skills": {"paths": [str(folder / "skills")], "userSkills": False}}))
    return config


@pytest.mark.usefixtures("examples_in_process")
def test_tools_and_schemas_of_a_skill_show_the_tools_of_the_server_it_brings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    config = skill_with_its_own_server(tmp_path)
    code, out, err = run(capsys, "-c", str(config), "tools", "--skill", "adder", "--json")
    assert code == 0, err
    assert [row["name"] for row in json.loads(out)] == ["calc__add"]
    code, out, err = run(capsys, "-c", str(config), "schemas", "--skill", "adder", "--format", "mcp")
    assert code == 0, err
    assert [tool["name"] for tool in json.loads(out)] == ["calc__add"]
