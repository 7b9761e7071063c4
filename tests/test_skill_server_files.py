"""Reading the servers a skill or a plugin brings, and what stops a skill from having them (no server starts here)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from toolsift._skill_servers import load_plugins, owned_servers
from toolsift.cli import main
from toolsift.config import ProjectTrust, StdioServer
from toolsift.skills import SkillsLoader

ENTRY = {"command": sys.executable, "args": ["server.py"]}


def skill(folder: Path, name: str, allowed: str = "x__*", servers: Any = None, raw: str | None = None) -> Path:
    path = folder / name
    path.mkdir(parents=True)
    (path / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\nallowed-tools: {allowed}\n---\nbody\n")
    if servers is not None or raw is not None:
        (path / ".mcp.json").write_text(raw if raw is not None else json.dumps(servers))
    return path


def plugin(root: Path, manifest: dict[str, Any], servers: dict[str, Any] | None = None) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    if servers is not None:
        (root / ".mcp.json").write_text(json.dumps(servers))
    return root


def test_a_skills_servers_are_its_own_internal_unsearchable_and_started_when_used(tmp_path: Path) -> None:
    skill(tmp_path, "one", servers={"mcpServers": {"calc": {**ENTRY, "lazy": True, "internalOnly": False}}})
    skill(tmp_path, "two", servers={"bare": {**ENTRY, "alwaysLoad": True, "args": ["${CLAUDE_PLUGIN_ROOT}/s.py"]}})
    found = owned_servers(SkillsLoader(project=tmp_path).load(), [])
    calc, bare = found["one"].servers[0], found["two"].servers[0]
    assert (calc.name, calc.internal_only, calc.searchable, calc.lazy, calc.always_load) == (
        "calc",
        True,
        False,
        False,
        False,
    )
    assert bare.name == "bare" and not bare.always_load
    assert isinstance(bare, StdioServer) and bare.args == (f"{tmp_path.resolve()}/two/s.py",)
    assert found["one"].sources == {"calc": tmp_path.resolve() / "one" / ".mcp.json"}


def test_a_broken_server_file_is_the_skills_problem_naming_file_and_line(tmp_path: Path) -> None:
    skill(tmp_path, "notjson", raw="{nope")
    skill(tmp_path, "badentry", raw='{"mcpServers": {\n  "s": {"command": "x", "timeout": "soon"}\n}}')
    found = owned_servers(SkillsLoader(project=tmp_path).load(), [])
    assert found["notjson"].problem is not None
    assert found["notjson"].problem.startswith(f"{tmp_path.resolve()}/notjson/.mcp.json: the skill's server file is")
    problem = found["badentry"].problem
    assert problem is not None and f"{tmp_path.resolve()}/badentry/.mcp.json:2" in problem and "timeout" in problem


def test_a_skills_server_named_like_a_configured_or_an_earlier_skills_server_cannot_start(tmp_path: Path) -> None:
    skill(tmp_path, "a-first", servers={"mcpServers": {"calc": ENTRY}})
    skill(tmp_path, "b-second", servers={"mcpServers": {"calc": ENTRY}})
    skill(tmp_path, "c-third", servers={"mcpServers": {"github": ENTRY}})
    found = owned_servers(
        SkillsLoader(project=tmp_path).load(), [], taken={"github": "the config file /p/toolsift.json"}
    )
    assert found["a-first"].problem is None
    assert found["b-second"].problem == (
        f"server 'calc' of {tmp_path.resolve()}/b-second/.mcp.json has the name of a server of "
        f"{tmp_path.resolve()}/a-first/.mcp.json; rename one of them (a skill's servers cannot share a name "
        "with another server)"
    )
    assert found["c-third"].problem is not None and "of the config file /p/toolsift.json" in found["c-third"].problem


def test_a_plugins_skills_share_its_servers_named_as_claude_code_names_them(tmp_path: Path) -> None:
    root = plugin(tmp_path / "kit", {"name": "kit", "skills": "./extra/"}, {"api": ENTRY})
    skill(root / "skills", "one", allowed="mcp__plugin_kit_api__get")
    skill(root / "extra", "two", allowed="mcp__plugin_kit_api__*")
    plugins, problems = load_plugins([tmp_path / "kit"])
    assert problems == []
    loaded = SkillsLoader(extra=plugins[0].skill_folders).load()
    assert loaded.get("one").allowed_tools == ("plugin_kit_api__get",)
    found = owned_servers(loaded, plugins)
    assert [s.name for s in found["one"].servers] == [s.name for s in found["two"].servers] == ["plugin_kit_api"]
    assert found["one"].problem is None and found["two"].problem is None  # one file: not a clash


def test_a_plugin_may_declare_its_servers_inline_or_in_a_file_it_names(tmp_path: Path) -> None:
    inline = plugin(
        tmp_path / "inline", {"name": "inline", "mcpServers": {"s": {"command": "${CLAUDE_PLUGIN_ROOT}/x"}}}
    )
    named = plugin(tmp_path / "named", {"name": "named", "mcpServers": "./servers.json"})
    (named / "servers.json").write_text(json.dumps({"mcpServers": {"t": ENTRY}}))
    missing = plugin(tmp_path / "missing", {"name": "missing", "mcpServers": "./nowhere.json"})
    plugins, problems = load_plugins([tmp_path])
    assert problems == []
    by_name = {p.name: p for p in plugins}
    declared = by_name["inline"].servers["plugin_inline_s"]
    server = declared.server
    assert isinstance(server, StdioServer) and server.command == f"{inline.resolve()}/x"
    assert (declared.file, declared.root) == (inline.resolve() / ".claude-plugin" / "plugin.json", inline.resolve())
    assert list(by_name["named"].servers) == ["plugin_named_t"]
    named_t = by_name["named"].servers["plugin_named_t"]
    assert (named_t.file, named_t.root) == (named.resolve() / "servers.json", None)  # its entry uses no root
    assert (
        by_name["missing"].problem is not None and "cannot read the skill's server file" in by_name["missing"].problem
    )
    assert str(missing.resolve() / "nowhere.json") in by_name["missing"].problem


def test_a_plugin_without_a_valid_manifest_is_reported_and_the_others_load(tmp_path: Path) -> None:
    plugin(tmp_path / "good", {"name": "good"})
    plugin(tmp_path / "bad", {"name": "Not A Name"})
    (tmp_path / "empty").mkdir()
    plugins, problems = load_plugins([tmp_path, tmp_path / "empty"])
    assert [p.name for p in plugins] == ["good"]
    assert [str(p) for p in problems] == [
        f"{tmp_path.resolve()}/bad/.claude-plugin/plugin.json: name: 'name' must be the plugin's id in kebab-case "
        "(lowercase letters, digits, single hyphens), got 'Not A Name'",
        f"skills.plugins: {tmp_path / 'empty'} is not a Claude Code plugin (no .claude-plugin/plugin.json) and holds "
        "none; give the plugin's folder",
    ]


def test_check_reports_skills_whose_servers_cannot_work_and_servers_their_skill_never_shows(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    skills = tmp_path / "skills"
    missing = {"command": "./no-such-program", "cwd": "bin"}  # relative to its folder, as at the start
    skill(skills, "gone", allowed="gone__*", servers={"mcpServers": {"gone": missing}})
    skill(skills, "unnamed", allowed="other__*", servers={"mcpServers": {"quiet": ENTRY}})
    plugin(tmp_path / "broken-plugin", {"name": 3})
    config = tmp_path / "toolsift.json"
    config.write_text(json.dumps({"skills": {"paths": ["skills"], "userSkills": False, "plugins": ["broken-plugin"]}}))
    with pytest.raises(SystemExit) as info:
        main(["-c", str(config), "check", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert info.value.code != 0 and not report["ok"]
    messages = [item["message"] for item in report["problems"]]
    assert "'name' must be the plugin's id in kebab-case (lowercase letters, digits, single hyphens), got 3" in messages
    gone = skills.resolve() / "gone"
    assert not [w for w in report["warnings"] if "names server 'gone'" in w["message"]]  # a server, a skill's own
    assert (
        f"skill 'gone' cannot be used: server 'gone': its command '{gone}/bin/no-such-program' is not an "
        f"executable file (it comes with {gone}/.mcp.json)"
    ) in messages
    assert {
        "file": str(skills.resolve() / "unnamed" / "SKILL.md"),
        "line": None,
        "field": None,
        "message": (
            "skill 'unnamed': allowed-tools names no tool of its server 'quiet' (quiet__<tool>), so none of them is "
            "ever shown"
        ),
    } in report["warnings"]


def test_trust_records_the_servers_a_projects_skills_bring(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    project = tmp_path / "repo"
    folder = skill(project / "skills", "adder", allowed="calc__add", servers={"mcpServers": {"calc": ENTRY}})
    (project / "toolsift.json").write_text(json.dumps({"skills": {"paths": ["skills"], "userSkills": False}}))
    monkeypatch.chdir(project)
    with pytest.raises(SystemExit) as info:
        main(["trust"])
    assert info.value.code in (0, None)
    source = folder.resolve() / ".mcp.json"
    assert f"{source} starts: calc: {sys.executable} server.py" in capsys.readouterr().out
    store = ProjectTrust(tmp_path / "xdg" / "toolsift" / "trusted-projects.json")
    assert list(store.trusted_launches(source)) == ["calc"]
