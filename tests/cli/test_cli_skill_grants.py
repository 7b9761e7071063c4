"""``toolsift skills grants|approve``: a person sees and approves the tools a skill from an MCP server asks for.

The upstream is another ``toolsift serve`` serving the example skill ``release-notes``
(``allowed-tools: read_file, list_directory``), reached in this process as is the CLI itself; one test runs the
real ``toolsift`` command as a child process. The grants land in a temporary user folder.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from cli_helpers import Piped, served_in_memory
from test_cli import run
from waits import CHILD_SECONDS

from toolsift._folders import user_folder
from toolsift.config import SkillGrants, load_config
from toolsift.toolbox import Toolbox

ROOT = Path(__file__).resolve().parents[2]
RELEASE_NOTES = ROOT / "examples" / "skills" / "release-notes"
URI = "skill://release-notes/SKILL.md"


@pytest.fixture
def upstream(tmp_path: Path) -> Path:
    """The served skill's folder, in a toolsift project that ``toolsift serve`` serves."""
    folder = tmp_path / "upstream"
    (folder / "ws").mkdir(parents=True)
    shutil.copytree(RELEASE_NOTES, folder / "skills" / "release-notes")
    config = {"workspace": "ws", "skills": {"paths": ["skills"], "userSkills": False}}
    (folder / "toolsift.json").write_text(json.dumps(config), encoding="utf-8")
    return folder / "skills" / "release-notes"


@pytest.fixture
def config(tmp_path: Path, upstream: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The person's config: ``docs`` is the upstream, ``idle`` a lazy server no command here needs.

    ``docs`` runs in this process (a child process still runs it as configured).
    """
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    served = upstream.parent.parent / "toolsift.json"
    served_in_memory(monkeypatch, {"docs": served})
    idle = tmp_path / "idle-started"
    servers = {
        "docs": {"command": sys.executable, "args": ["-m", "toolsift.serve", "--config", str(served)]},
        "idle": {"command": sys.executable, "args": ["-c", f"open({str(idle)!r}, 'w')"], "lazy": True},
    }
    (tmp_path / "ws").mkdir()
    path = tmp_path / "toolsift.json"
    path.write_text(
        json.dumps(
            {
                "workspace": "ws",
                "tools": {"mcpServers": servers, "builtins": {"enabled": True}},
                "skills": {"userSkills": False},
            }
        ),
        encoding="utf-8",
    )
    return path


def grants(capsys: pytest.CaptureFixture[str], config: Path) -> dict[str, dict[str, object]]:
    code, out, err = run(capsys, "-c", str(config), "skills", "grants", "docs", "--json")
    assert code == 0, err
    return {row["name"]: row for row in json.loads(out)["skills"]}


async def tools_under_the_skill(config: Path) -> set[str]:
    """The tools a turn offers in a Toolbox conversation after ``/use docs/release-notes``."""
    async with Toolbox(load_config(config)) as box:
        conversation = box.conversation()
        reply = await conversation.handle_command("/use docs/release-notes version=2.1.0")
        assert reply.ok, reply.text
        return {tool.spec.name for tool in box.registry.visible_tools(conversation.scope())}


def test_a_person_approves_a_served_skills_tools_sees_a_change_and_revokes(
    capsys: pytest.CaptureFixture[str], config: Path, upstream: Path, tmp_path: Path
) -> None:
    code, out, err = run(capsys, "-c", str(config), "skills", "grants")
    assert code == 0, err
    assert "docs/release-notes\tread_file, list_directory\tnot approved\tskill://release-notes/SKILL.md" in out
    assert "Approve a skill's allowed-tools with 'toolsift skills approve docs/release-notes'." in out
    assert "Connecting 1 MCP server(s)" in err and not (tmp_path / "idle-started").exists()  # only docs started
    unlimited = anyio.run(tools_under_the_skill, config)
    assert {"read_file", "write_file", "search_tools"} <= unlimited  # not approved: the skill limits nothing

    code, out, err = run(capsys, "-c", str(config), "skills", "approve", "docs/release-notes")
    assert code == 0, err
    assert "docs/release-notes: skill://release-notes/SKILL.md on MCP server 'docs'" in out
    assert "allowed-tools: read_file, list_directory" in out
    assert f"  {URI} sha256:" in out and "  skill://release-notes/reference/sections.md sha256:" in out
    assert "Approved for these files" in out
    store = user_folder() / "skill-grants.json"
    recorded = SkillGrants(store).grant("docs", URI)
    assert recorded is not None and recorded.allowed_tools == ("read_file", "list_directory")
    assert grants(capsys, config)["docs/release-notes"]["grant"] == "approved"
    assert anyio.run(tools_under_the_skill, config) == {"read_file", "list_directory", "read_skill_file"}

    # The server's skill changes: the approval no longer covers it, and the listing says what changed.
    reference = upstream / "reference" / "sections.md"
    reference.write_text(reference.read_text() + "\nAlso run the tests.\n", encoding="utf-8")
    row = grants(capsys, config)["docs/release-notes"]
    assert row["grant"] == "changed since approval"
    assert row["changes"] == ["changed: skill://release-notes/reference/sections.md"]
    code, out, _ = run(capsys, "-c", str(config), "skills", "grants")
    assert "docs/release-notes changed since you approved it:\n  changed: " in out
    assert anyio.run(tools_under_the_skill, config) == unlimited

    code, out, err = run(capsys, "-c", str(config), "skills", "approve", "--revoke", "docs/release-notes")
    assert code == 0, err
    assert out == "docs/release-notes: approval of read_file, list_directory forgotten\n"
    assert SkillGrants(store).recorded() == []
    assert grants(capsys, config)["docs/release-notes"]["grant"] == "not approved"
    code, out, _ = run(capsys, "-c", str(config), "skills", "approve", "--revoke", "docs/release-notes")
    assert code == 0 and out == "docs/release-notes: no approval was ever given\n"


def test_a_mistyped_skill_or_server_is_refused_with_the_names_known(
    capsys: pytest.CaptureFixture[str], config: Path
) -> None:
    code, _, err = run(capsys, "-c", str(config), "skills", "approve", "docs/release-note")
    assert code == 3
    assert "Unknown skill 'docs/release-note'; did you mean 'docs/release-notes'?" in err
    code, _, err = run(capsys, "-c", str(config), "skills", "approve", "doc/release-notes")
    assert code == 4 and "no server 'doc' in this config (its servers: docs, idle)" in err
    code, _, err = run(capsys, "-c", str(config), "skills", "grants", "doc")
    assert code == 4 and "no server 'doc' in this config" in err
    assert not (user_folder() / "skill-grants.json").exists()


def test_revoking_a_mistyped_name_names_the_approved_skills(capsys: pytest.CaptureFixture[str], config: Path) -> None:
    SkillGrants().approve("docs", URI, {URI: "sha256:00"}, ["read_file"])
    code, _, err = run(capsys, "-c", str(config), "skills", "approve", "--revoke", "docs/release-note")
    assert code == 3
    assert "Unknown skill 'docs/release-note'; did you mean 'docs/release-notes'?; available: docs/release-notes" in err
    assert SkillGrants().grant("docs", URI) is not None


def test_an_unreadable_grants_store_approves_nothing_and_is_named(
    capsys: pytest.CaptureFixture[str], config: Path
) -> None:
    store = user_folder() / "skill-grants.json"
    store.parent.mkdir(parents=True)
    store.write_text("{not json")
    code, out, err = run(capsys, "-c", str(config), "skills", "grants")
    assert code == 0, err
    assert "docs/release-notes\tread_file, list_directory\tnot approved" in out  # still offered, grant not in force
    code, _, err = run(capsys, "-c", str(config), "skills", "approve", "docs/release-notes")
    assert code == 4
    assert f"{store}: cannot read the skill grants:" in err.replace("\n", "") and "fix or delete the file" in err
    assert store.read_text() == "{not json"


def test_an_unwritable_grants_store_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing can be created under /proc, whoever runs the test (root included).
    monkeypatch.setenv("XDG_CONFIG_HOME", "/proc/self/no-config")
    code, _, err = run(capsys, "-c", str(config), "skills", "approve", "docs/release-notes")
    assert code == 4
    assert "/proc/self/no-config/toolsift/skill-grants.json: cannot save the skill grants:" in err.replace("\n", "")


def test_a_server_that_is_down_cannot_have_its_skills_approved(config: Path) -> None:
    # The real command, in a child process: the skills family's run through the console entry point.
    data = json.loads(config.read_text())
    data["tools"]["mcpServers"]["docs"] = {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]}
    config.write_text(json.dumps(data))
    done = subprocess.run(
        [sys.executable, "-m", "toolsift", "-c", str(config), "skills", "approve", "docs/release-notes"],
        capture_output=True,
        text=True,
        timeout=CHILD_SECONDS,
        check=False,
    )
    err = " ".join(done.stderr.split())  # rich wraps the line at the width of no terminal
    assert done.returncode == 1 and "server 'docs' is not connected (" in err, done.stderr
    assert "its skills cannot be approved" in err


def test_chat_marks_a_served_skill_whose_tools_wait_for_approval(
    capsys: pytest.CaptureFixture[str], config: Path
) -> None:
    """``chat`` answers servers' requests, so it speaks 2025-11-25, where no extension is declared: it still asks."""

    def skills_listing() -> str:
        chat = Piped("/skills")
        assert chat.run("-c", str(config), "chat") == 0, chat.err.text
        return chat.out.text

    listing = skills_listing()
    assert "? /use docs/release-notes version=<x.y.z>" in listing
    assert (
        "    its allowed-tools (read_file, list_directory) are not approved for this version; review them with "
        "'toolsift skills grants docs', approve with 'toolsift skills approve docs/release-notes'"
    ) in listing
    code, _, err = run(capsys, "-c", str(config), "skills", "approve", "docs/release-notes")
    assert code == 0, err
    listing = skills_listing()
    assert "  /use docs/release-notes version=<x.y.z>" in listing and "not approved" not in listing
