"""``toolsift check`` on skills: their load warnings, and patterns that match no tool check can know."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolsift.cli import main


def project(folder: Path, allowed: str, servers: dict[str, Any] | None = None) -> Path:
    skill = folder / "skills" / "ops" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(f"---\nname: ops\ndescription: Ops.\nallowed-tools: {allowed}\n---\nDo it.\n")
    config = folder / "toolsift.json"
    config.write_text(
        json.dumps({"tools": {"mcpServers": servers or {}}, "skills": {"paths": ["skills"], "userSkills": False}})
    )
    return config


def check(capsys: pytest.CaptureFixture[str], config: Path) -> tuple[int, dict[str, Any]]:
    with pytest.raises(SystemExit) as info:
        main(["-c", str(config), "check", "--json"])
    return int(info.value.code or 0), json.loads(capsys.readouterr().out)


GENERAL = {"general": {"command": "general-server", "internalOnly": False}, "off": {"command": "x", "enabled": False}}


WORKSPACE_TOOL = (
    "skill 'ops': allowed-tools entry 'read_file' is a workspace tool and only toolsift serve provides it; "
    'toolsift chat, a Toolbox and the adapters get it with "tools": {"builtins": {"enabled": true}}'
)


def test_check_warns_about_patterns_that_match_no_tool(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = project(tmp_path, "read_file, read_fle, mcp__nothere__x, off__y, general__*", GENERAL)
    code, report = check(capsys, config)
    assert code == 0 and report["ok"] is True  # warnings never fail check
    skill = str(tmp_path / "skills" / "ops" / "SKILL.md")
    assert [(w["file"], w["field"], w["message"]) for w in report["warnings"]] == [
        (
            skill,
            "allowed-tools",
            "skill 'ops': pattern 'read_fle' matches no builtin tool and cannot match a configured server's tools",
        ),
        (
            skill,
            "allowed-tools",
            "skill 'ops': pattern 'nothere__x' names server 'nothere', which is not an "
            "enabled server of the config (general)",
        ),
        (
            skill,
            "allowed-tools",
            "skill 'ops': pattern 'off__y' names server 'off', which is not an enabled server of the config (general)",
        ),
        (skill, "allowed-tools", WORKSPACE_TOOL),  # the agent loop has no file tools unless tools.builtins is on
    ]
    assert report["hints"][-1].startswith(
        "skill patterns that may name tools of general were not checked: check does not connect to servers"
    )


def test_check_lists_skill_warnings_but_not_kept_entries_as_unmatched(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = project(tmp_path, "Bash(git add:*), Read, read_file")
    code, report = check(capsys, config)
    assert code == 0
    messages = [w["message"] for w in report["warnings"]]
    assert messages == [
        "'Bash(git add:*)' is a Claude Code permission rule for its 'Bash' tool, which toolsift "
        "does not have; kept, it matches no tool",
        "'Read' is a Claude Code built-in tool, which toolsift does not have; kept, it matches no tool",
        WORKSPACE_TOOL,
    ]
    assert {(w["field"], w["line"]) for w in report["warnings"][:2]} == {("allowed-tools", 4)}  # the loader's, located
    assert report["hints"] == []


def test_check_without_servers_checks_every_pattern(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = project(tmp_path, "'*_search, search_*, list_*'")
    _, report = check(capsys, config)
    assert [w["message"] for w in report["warnings"]] == [
        "skill 'ops': pattern '*_search' matches no builtin tool and cannot match a configured server's tools"
    ]
    assert report["hints"] == []


def test_check_text_output_names_skill_and_pattern(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = project(tmp_path, "read_fle")
    with pytest.raises(SystemExit) as info:
        main(["-c", str(config), "check"])
    out = capsys.readouterr().out
    assert info.value.code == 0
    assert "warning  " in out and "allowed-tools: skill 'ops': pattern 'read_fle' matches no builtin tool" in out
    assert out.rstrip().endswith("OK, 1 warning(s)")


def write_skill(folder: Path, name: str, front: str = "") -> Path:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"---\nname: {name}\ndescription: {name} skill.\n{front}---\nDo it.\n")
    return path


def test_skills_of_a_claude_code_project_and_home_are_found_where_claude_code_keeps_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    monkeypatch.setenv("HOME", str(home))
    (repo).mkdir()
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {}}))
    write_skill(repo / ".claude" / "skills", "deploy", "allowed-tools: Bash(git add:*), Read\n")
    write_skill(home / ".claude" / "skills", "deploy")  # the user's own wins a clash, as in Claude Code
    write_skill(home / ".claude" / "skills", "review")
    write_skill(home / ".toolsift" / "skills", "notes")
    monkeypatch.chdir(repo)
    with pytest.raises(SystemExit) as info:
        main(["skills", "list", "--json"])
    listed = json.loads(capsys.readouterr().out)
    assert info.value.code in (0, None)
    paths = {s["name"]: s["path"] for s in listed["skills"]}
    assert sorted(paths) == ["deploy", "notes", "review"]
    assert paths["deploy"] == str(home / ".claude" / "skills" / "deploy" / "SKILL.md")
    (clash,) = [p["message"] for p in listed["problems"]]  # reported, never resolved silently
    assert str(repo / ".claude" / "skills" / "deploy" / "SKILL.md") in clash and paths["deploy"] in clash


def test_check_prints_each_skill_warning_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = project(tmp_path, "Read, Bash(gh pr view:*)")
    with pytest.raises(SystemExit):
        main(["-c", str(config), "check"])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert text.count("'Read' is a Claude Code built-in tool") == 1
    assert text.count("'Bash(gh pr view:*)' is a Claude Code permission rule") == 1


def test_check_names_a_broken_skills_place_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = project(tmp_path, "general__*")
    broken = tmp_path / "skills" / "broken" / "SKILL.md"
    broken.parent.mkdir()
    broken.write_text("---\nname: broken\ndescription: [unclosed\n---\nBody.\n")
    with pytest.raises(SystemExit):
        main(["-c", str(config), "check"])
    out = capsys.readouterr().out
    assert f"problem  {broken}:4: invalid YAML in the front matter" in out and out.count(str(broken)) == 1


def test_check_resolve_reports_references_that_do_not_resolve(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLSIFT_TEST_UNSET", raising=False)
    config = project(tmp_path, "general__*", {"general": {"command": "x", "env": {"K": "${TOOLSIFT_TEST_UNSET}"}}})
    code, report = check(capsys, config)
    assert code == 0 and report["ok"] is True  # references are resolved when a server connects
    with pytest.raises(SystemExit) as info:
        main(["-c", str(config), "check", "--json", "--resolve"])
    resolved = json.loads(capsys.readouterr().out)
    assert info.value.code == 1 and resolved["ok"] is False
    assert "TOOLSIFT_TEST_UNSET" in json.dumps(resolved["problems"])
