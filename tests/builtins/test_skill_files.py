"""A skill's own files: listing, digests, and reads confined to the skill's folder."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolsift import PolicyDenied
from toolsift._skill_files import sha256_digest, skill_files_note
from toolsift.builtins._internal import FolderFiles, SkillFileTool
from toolsift.registry import ToolContext, TurnScope
from toolsift.search._mcp_skills import ServedSkillFiles
from toolsift.skills import parse_skill

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
    tool = SkillFileTool(skills.__getitem__)

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
