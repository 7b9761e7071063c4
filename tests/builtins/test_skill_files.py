"""A skill's own files: listing, digests, and reads confined to the skill's folder."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolsift import PolicyDenied
from toolsift._skill_files import sha256_digest, skill_files_note
from toolsift.agent import ToolCall
from toolsift.builtins._internal import FolderFiles, SkillFileTool
from toolsift.builtins._protected import ProtectedPath
from toolsift.registry import ToolContext, TurnScope
from toolsift.search._mcp_skills import ServedSkillFiles
from toolsift.skills import parse_skill
from toolsift.toolbox import Toolbox

SKILL = "---\nname: guide\ndescription: A skill with files.\n---\nSee reference/guide.md.\n"


@pytest.fixture
def skill_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "skills" / "guide"
    (folder / "reference").mkdir(parents=True)
    (folder / "scripts").mkdir()
    (folder / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (folder / "reference" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    (folder / "scripts" / "run.py").write_text("print('hi')\n", encoding="utf-8")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("top secret\n", encoding="utf-8")
    # Links: one out of the skill (never listed nor read), one inside it (a file of the skill).
    (folder / "escape.md").symlink_to(tmp_path / "secret.txt")
    (folder / "reference" / "alias.md").symlink_to(folder / "reference" / "guide.md")
    (folder / "outside").symlink_to(tmp_path)
    return folder


def test_folder_files_lists_the_skill_and_nothing_that_leads_out(skill_folder: Path) -> None:
    files = FolderFiles(skill_folder)
    assert files.names() == ["SKILL.md", "reference/alias.md", "reference/guide.md", "scripts/run.py"]
    assert sha256_digest(b"abc") == "sha256:" + hashlib.sha256(b"abc").hexdigest()


async def test_folder_files_reads_its_own_files_and_refuses_links_out(skill_folder: Path) -> None:
    files = FolderFiles(skill_folder)
    assert await files.read("reference/guide.md") == b"# Guide\n"
    assert await files.read(str(skill_folder / "scripts" / "run.py")) == b"print('hi')\n"
    for path in ("../../secret.txt", "escape.md", "outside/secret.txt", "/etc/passwd", "reference/../../x"):
        with pytest.raises(PolicyDenied, match="leaves the skill's folder") as caught:
            await files.read(path)
        assert caught.value.tool == "read_skill_file"
    with pytest.raises(PolicyDenied, match="expected a non-empty path string"):
        await files.read("")
    with pytest.raises(FileNotFoundError):
        await files.read("reference/nope.md")


SEGMENTS = st.sampled_from(["..", ".", "", "reference", "guide.md", "escape.md", "outside", "secret.txt", "~"])


# The fixture's folder is only read, so one folder serves every example.
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(SEGMENTS, max_size=6), absolute=st.booleans())
def test_folder_files_never_resolves_outside_the_skill(skill_folder: Path, parts: list[str], absolute: bool) -> None:
    path = ("/" if absolute else "") + "/".join(parts)
    files = FolderFiles(skill_folder)
    root = Path(os.path.realpath(skill_folder))
    try:
        resolved = files.resolve(path)
    except PolicyDenied:
        return
    # Where the path really leads, links followed: a lexical check alone would let outside/secret.txt through.
    real = Path(os.path.realpath(resolved))
    assert real == root or root in real.parents


@given(parts=st.lists(SEGMENTS, min_size=1, max_size=6))
def test_served_skill_files_resolve_only_inside_the_skill(parts: list[str]) -> None:
    files = ServedSkillFiles(_NoSession(), "skill://acme/guide/SKILL.md", {})
    try:
        uri = files.uri_of("/".join(parts))
    except PolicyDenied:
        return
    assert uri.startswith("skill://acme/guide/")
    assert ".." not in uri.removeprefix("skill://acme/guide/").split("/")


class _NoSession:
    name = "acme"


def test_skill_files_note_says_where_the_skill_lives_and_lists_its_files(skill_folder: Path) -> None:
    files = FolderFiles.of(parse_skill(skill_folder / "SKILL.md"))
    assert files is not None
    note = skill_files_note(files)
    assert f"This skill lives in the folder {str(skill_folder.resolve())!r}" in note
    assert "- reference/guide.md\n- scripts/run.py" in note
    assert "read_skill_file" in note
    alone = skill_folder.parent / "alone"
    alone.mkdir()
    (alone / "SKILL.md").write_text(SKILL.replace("guide", "alone"), encoding="utf-8")
    only = FolderFiles.of(parse_skill(alone / "SKILL.md"))
    assert only is not None
    assert skill_files_note(only) == ""


async def test_skill_file_tool_reads_the_active_skills_file_only(skill_folder: Path) -> None:
    skill = parse_skill(skill_folder / "SKILL.md")
    skills = {"guide": skill}
    tool = SkillFileTool(skills.__getitem__, FolderFiles.of)

    def ctx(name: str | None) -> ToolContext:
        return ToolContext("c1", scope=TurnScope(skill=name))

    read = await tool.call({"path": "reference/guide.md"}, ctx("guide"))
    assert not read.is_error
    assert read.text_content() == "# Guide\n"
    none = await tool.call({"path": "reference/guide.md"}, ctx(None))
    assert none.is_error
    assert "no skill is active" in none.text_content()
    missing = await tool.call({"path": "reference/nope.md"}, ctx("guide"))
    assert "skill 'guide' has no file 'reference/nope.md'; its files: reference/alias.md" in missing.text_content()
    with pytest.raises(PolicyDenied, match="leaves the skill's folder"):
        await tool.call({"path": "../../secret.txt"}, ctx("guide"))


# -- what configures toolsift, by another name in a skill's folder ----------------------------------


def project_with_linked_env(tmp_path: Path) -> tuple[Path, Path]:
    """A skill whose folder holds a hard link to a server's env file, and the skills folder it lies in."""
    skills = tmp_path / "skills"
    folder = skills / "guide"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (folder / "guide.md").write_text("# Guide\n", encoding="utf-8")
    (tmp_path / "app.env").write_text("TOKEN=sk-skill-files-0123456789\n", encoding="utf-8")
    os.link(tmp_path / "app.env", folder / "notes.md")
    return folder, skills


def protected(tmp_path: Path, skills: Path) -> list[ProtectedPath]:
    return [
        ProtectedPath(tmp_path / "app.env", "the env file of server 'api'"),
        ProtectedPath(skills, "a skills folder", folder=True),  # holds the skill: not applied to its own files
    ]


async def test_folder_files_refuse_a_hard_link_to_a_protected_file(tmp_path: Path) -> None:
    folder, skills = project_with_linked_env(tmp_path)
    files = FolderFiles(folder, protected=lambda: protected(tmp_path, skills))
    assert files.names() == ["SKILL.md", "guide.md"]
    with pytest.raises(PolicyDenied) as caught:
        await files.read("notes.md")
    assert caught.value.reason == (
        f"the skill's file 'notes.md' is a hard link to {str(tmp_path / 'app.env')!r}: the env file of server "
        "'api'; a skill's files never include what configures toolsift"
    )
    assert await files.read("SKILL.md") == SKILL.encode()


async def test_folder_files_refuse_a_protected_file_lying_in_the_skills_folder(tmp_path: Path) -> None:
    # A skill at the project's root: the project's own config is among its files by location.
    (tmp_path / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (tmp_path / "toolsift.json").write_text("{}", encoding="utf-8")
    files = FolderFiles(tmp_path, protected=[ProtectedPath(tmp_path / "toolsift.json", "a config file")])
    assert files.names() == ["SKILL.md"]
    with pytest.raises(PolicyDenied, match="resolves to .*, at .*toolsift.json': a config file; a skill's files"):
        files.resolve("./toolsift.json")


async def test_read_skill_file_in_a_toolbox_refuses_a_hard_link_to_an_env_file(tmp_path: Path) -> None:
    project_with_linked_env(tmp_path)
    server = {"command": sys.executable, "args": ["-c", "pass"], "envFile": "app.env", "lazy": True}
    config = {"tools": {"mcpServers": {"api": server}}, "skills": {"paths": ["skills"], "userSkills": False}}
    (tmp_path / "toolsift.json").write_text(json.dumps(config), encoding="utf-8")
    async with Toolbox.from_config(tmp_path / "toolsift.json") as box:
        chat = box.conversation()
        assert (await chat.handle_command("/use guide")) is not None
        called = await chat.call_tool(ToolCall("1", "read_skill_file", {"path": "notes.md"}))
        listed = await chat.call_tool(ToolCall("2", "read_skill_file", {"path": "nope.md"}))
    assert "its files: guide.md" in listed.result.text_content()  # the link is not among them
    assert called.result.is_error
    assert "sk-skill-files" not in called.result.text_content()
    assert "the env file of server 'api'" in called.result.text_content()
