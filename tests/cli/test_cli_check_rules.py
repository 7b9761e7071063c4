"""``toolsift check`` on permission globs: those that match no tool check can know are warnings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolsift.cli import main

PERMISSIONS = {
    "denylist": ["builtin__exec_shell", "exec_shel"],
    "ask": ["write_file", "general__add", "nothere__x", "danger", "off__y"],
}
SERVERS = {"general": {"command": "general-server", "internalOnly": False}, "off": {"command": "x", "enabled": False}}


def project(folder: Path, serve: dict[str, Any] | None = None) -> Path:
    config = folder / "toolsift.json"
    config.write_text(
        json.dumps(
            {
                "tools": {
                    "mcpServers": SERVERS,
                    "permissions": [
                        {"match": "builtin__list_directory", "requiredLevel": "admin"},
                        {"match": "lst_dir", "requiredLevel": "admin"},
                    ],
                },
                "agents": {
                    "ops": {
                        "permissions": PERMISSIONS,
                        "allowedTools": ["builtin__read_file", "read_file", "general__*"],
                    }
                },
                "serve": serve or {},
            }
        )
    )
    return config


def check(capsys: pytest.CaptureFixture[str], config: Path) -> tuple[int, dict[str, Any]]:
    with pytest.raises(SystemExit) as info:
        main(["-c", str(config), "check", "--json"])
    return int(info.value.code or 0), json.loads(capsys.readouterr().out)


RULES = (
    "rules match a tool by its canonical name (read_file, github__create_issue), its served name "
    "(builtin__read_file), its server's key under a toolPrefix, and its provider aliases"
)


def test_check_warns_about_permission_globs_that_match_no_tool(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = project(tmp_path)
    code, report = check(capsys, config)
    assert code == 0 and report["ok"] is True  # warnings never fail check
    assert [(w["field"], w["message"]) for w in report["warnings"]] == [
        ("tools.permissions[1].match", f"rule 'lst_dir' matches no tool, so it has no effect; {RULES}"),
        ("agents.ops.permissions.denylist", f"rule 'exec_shel' matches no tool, so it has no effect; {RULES}"),
        ("agents.ops.permissions.ask", f"rule 'nothere__x' matches no tool, so it has no effect; {RULES}"),
        ("agents.ops.permissions.ask", f"rule 'danger' matches no tool, so it has no effect; {RULES}"),
        ("agents.ops.permissions.ask", f"rule 'off__y' matches no tool, so it has no effect; {RULES}"),
        (
            "agents.ops.allowedTools",
            "allowedTools entry 'builtin__read_file' matches no tool, so it has no effect; "
            "allowedTools match canonical names (read_file, github__create_issue)",
        ),
    ]
    assert all(w["file"] == str(config) for w in report["warnings"])
    assert report["hints"][-1] == (
        "permission rules that may name tools of general were not checked: check does "
        "not connect to servers; a starting toolbox or 'toolsift serve' logs the rules "
        "that match none of their tools"
    )


def test_check_leaves_bare_names_to_start_up_when_a_gateway_serves_tools_unprefixed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # With prefixNames: false a server's tool may be served as "danger": check cannot tell, start-up can.
    _, report = check(capsys, project(tmp_path, serve={"gateway": True, "prefixNames": False}))
    messages = [w["message"] for w in report["warnings"]]
    assert not any("'danger'" in message or "'exec_shel'" in message for message in messages)
    assert any("'nothere__x'" in message for message in messages)


def test_check_says_ok_with_no_rule_warning_when_every_glob_matches(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "toolsift.json"
    config.write_text(
        json.dumps(
            {
                "agents": {
                    "ops": {"permissions": {"denylist": ["builtin__exec_shell"], "ask": ["write_file", "builtin__*"]}}
                }
            }
        )
    )
    code, report = check(capsys, config)
    assert (code, report["warnings"], report["hints"]) == (0, [], [])
