"""Skill discovery: precedence, clashes, bad skills, reloads and subscribers (no watching)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from toolsift import SkillNotFound, SkillParseError
from toolsift._folders import default_user_dir
from toolsift.skills import SkillsLoader, SkillsReloaded


def write(root: Path, name: str, description: str = "A skill.", *, extra: str = "", body: str = "Body.") -> Path:
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n", encoding="utf-8")
    return path


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    project, user, extra = tmp_path / "project", tmp_path / "user", tmp_path / "extra"
    for folder in (project, user, extra):
        folder.mkdir()
    return project, user, extra


def test_loader_discovers_skills_in_every_folder(folders: tuple[Path, Path, Path]) -> None:
    project, user, extra = folders
    write(project, "code-assist")
    write(user, "summarize")
    write(extra, "release-notes")
    loaded = SkillsLoader(project=project, user=user, extra=[extra]).load()
    assert list(loaded.skills) == ["code-assist", "summarize", "release-notes"]
    assert loaded.problems == ()
    assert "summarize" in loaded and len(loaded) == 3
    assert [s.name for s in loaded] == list(loaded.skills)


def test_loader_project_wins_a_clash_and_reports_both_paths(folders: tuple[Path, Path, Path]) -> None:
    project, user, extra = folders
    mine = write(project, "summarize", "Project version.")
    theirs = write(user, "summarize", "User version.")
    third = write(extra, "summarize", "Extra version.")
    loader = SkillsLoader(project=project, user=user, extra=[extra])
    assert loader.get("summarize").description == "Project version."
    problems = loader.problems
    assert [(p.path, p.shadowed_by) for p in problems] == [(theirs, mine), (third, mine)]
    assert str(theirs) in problems[0].message and str(mine) in problems[0].message
    assert "comes first (project, then user, then extra folders)" in problems[0].message
    assert problems[0].exception is None and problems[0].field is None and problems[0].line is None


def test_loader_user_wins_over_extra_folders(folders: tuple[Path, Path, Path]) -> None:
    _, user, extra = folders
    write(user, "summarize", "User version.")
    write(extra, "summarize", "Extra version.")
    assert SkillsLoader(user=user, extra=[extra]).get("summarize").description == "User version."


def test_loader_bad_skill_is_reported_and_others_load(folders: tuple[Path, Path, Path]) -> None:
    project, _, _ = folders
    write(project, "good")
    bad = write(project, "bad", extra="allowed-tools: ['a[b]']\n")
    loader = SkillsLoader(project=project)
    assert list(loader.skills.skills) == ["good"]
    (problem,) = loader.problems
    assert problem.path == bad and problem.field == "allowed-tools" and problem.line == 4
    assert isinstance(problem.exception, SkillParseError)
    assert problem.message.startswith(f"{bad}:4: field 'allowed-tools'")


def test_a_skill_that_failed_to_parse_is_named_as_such_not_unknown(folders: tuple[Path, Path, Path]) -> None:
    project, _, _ = folders
    write(project, "summarize")
    broken = write(project, "broken", description="[unclosed")
    loader = SkillsLoader(project=project)
    with pytest.raises(SkillParseError) as caught:
        loader.get("broken")
    assert str(caught.value).startswith(f"{broken}:4: invalid YAML in the front matter")
    assert str(caught.value).endswith("skill 'broken' failed to parse, so it is not loaded until this is fixed")
    assert caught.value.line == 4 and caught.value.path == broken
    with pytest.raises(SkillNotFound, match="Unknown skill 'brokn'; available: summarize"):
        loader.get("brokn")  # only the folder's own name is that skill


def test_loader_broken_higher_precedence_skill_lets_the_next_one_load(folders: tuple[Path, Path, Path]) -> None:
    project, user, _ = folders
    broken = write(project, "summarize", extra="user-invocable: maybe\n")
    write(user, "summarize", "User version.")
    loader = SkillsLoader(project=project, user=user)
    assert loader.get("summarize").description == "User version."
    assert [p.path for p in loader.problems] == [broken]


def test_loader_get_unknown_lists_available(folders: tuple[Path, Path, Path]) -> None:
    project, _, _ = folders
    write(project, "summarize")
    write(project, "code-assist")
    with pytest.raises(
        SkillNotFound, match=r"Unknown skill 'sumarize'; did you mean 'summarize'\?; available: code-assist, summarize"
    ):
        SkillsLoader(project=project).get("sumarize")
    with pytest.raises(SkillNotFound, match=r"Unknown skill 'x'; no skills are loaded"):
        SkillsLoader().get("x")


def test_loader_skips_missing_folders_hidden_folders_and_loose_files(tmp_path: Path) -> None:
    write(tmp_path, ".hidden")
    (tmp_path / "notes.md").write_text("not a skill")
    (tmp_path / "empty-dir").mkdir()
    loader = SkillsLoader(project=tmp_path / "absent", user=tmp_path)
    assert loader.load().skills == {} and loader.problems == ()


def test_loader_folder_that_is_a_file_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    (problem,) = SkillsLoader(project=tmp_path / "file").problems
    assert problem.message == f"{tmp_path / 'file'}: a skill folder must be a directory"


def test_loader_unlistable_folder_is_a_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests often run as root, who can list any folder; make listing fail the way chmod 000 would.
    def refuse(self: Path, pattern: str) -> list[Path]:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "glob", refuse)
    (problem,) = SkillsLoader(project=tmp_path).problems
    assert problem.message == f"{tmp_path}: cannot list the folder: Permission denied"


def test_loader_same_folder_given_twice_is_scanned_once(folders: tuple[Path, Path, Path]) -> None:
    project, _, _ = folders
    write(project, "summarize")
    loader = SkillsLoader(project=project, extra=[project / ".." / "project", str(project)])
    assert loader.folders == (project.resolve(),)
    assert loader.problems == ()


def test_loader_never_reads_home_unless_told(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    write(tmp_path / ".toolsift" / "skills", "mine")
    assert SkillsLoader().folders == ()
    assert default_user_dir() == tmp_path / ".toolsift" / "skills"
    assert "mine" in SkillsLoader(user=default_user_dir()).skills


def test_loader_rejects_negative_debounce() -> None:
    with pytest.raises(ValueError, match=r"debounce_ms must be >= 0, got -1"):
        SkillsLoader(debounce_ms=-1)


def test_reload_reports_added_changed_removed(folders: tuple[Path, Path, Path]) -> None:
    project, _, _ = folders
    write(project, "stay")
    write(project, "edit")
    gone = write(project, "gone")
    loader = SkillsLoader(project=project)
    first = loader.reload()
    assert first.added == ("edit", "gone", "stay") and bool(first)
    write(project, "edit", "Edited.")
    write(project, "new")
    gone.unlink()
    event = loader.reload()
    assert (event.added, event.changed, event.removed) == (("new",), ("edit",), ("gone",))
    assert loader.get("edit").description == "Edited."
    assert not loader.reload()


def test_reload_reuses_unchanged_skills(folders: tuple[Path, Path, Path]) -> None:
    project, _, _ = folders
    write(project, "stay")
    loader = SkillsLoader(project=project)
    before = loader.get("stay")
    loader.reload()
    assert loader.get("stay") is before


def test_reload_broken_edit_keeps_last_good_version(
    folders: tuple[Path, Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    project, _, _ = folders
    path = write(project, "summarize", "Good.")
    loader = SkillsLoader(project=project)
    good = loader.get("summarize")
    path.write_text("---\nname: summarize\ndescription: Half saved.\nuser-invocable: mayb\n---\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="toolsift.skills"):
        event = loader.reload()
    assert loader.get("summarize") is good
    assert event.problems_changed and not (event.added or event.changed or event.removed)
    (problem,) = event.problems
    assert problem.path == path and problem.line == 4 and problem.field == "user-invocable"
    assert problem.message.endswith("; keeping the last good version")
    assert "keeping the last good version" in caplog.text
    # Fixing it clears the problem and reports the change.
    write(project, "summarize", "Fixed.")
    fixed = loader.reload()
    assert fixed.changed == ("summarize",) and fixed.problems_changed and fixed.problems == ()


def test_reload_file_removed_while_broken_is_removed(folders: tuple[Path, Path, Path]) -> None:
    project, _, _ = folders
    path = write(project, "summarize")
    loader = SkillsLoader(project=project)
    loader.load()
    path.write_text("broken", encoding="utf-8")
    loader.reload()
    path.unlink()
    event = loader.reload()
    assert event.removed == ("summarize",) and event.problems == ()


def test_subscribers_hear_changes_and_a_failing_one_does_not_stop_others(
    folders: tuple[Path, Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    project, _, _ = folders
    loader = SkillsLoader(project=project)
    heard: list[SkillsReloaded] = []

    def broken(event: SkillsReloaded) -> None:
        raise RuntimeError("subscriber bug")

    loader.subscribe(broken)
    unsubscribe = loader.subscribe(heard.append)
    write(project, "summarize")
    with caplog.at_level(logging.ERROR, logger="toolsift.skills"):
        loader.reload()
    assert [e.added for e in heard] == [("summarize",)]
    assert "A skills reload subscriber failed" in caplog.text
    loader.reload()  # nothing changed: nobody is told
    assert len(heard) == 1
    unsubscribe()
    unsubscribe()  # a second call is harmless
    write(project, "other")
    loader.reload()
    assert len(heard) == 1


def test_skill_set_invocable_excludes_hidden_skills(folders: tuple[Path, Path, Path]) -> None:
    project, _, _ = folders
    write(project, "shown")
    write(project, "hidden", extra="user-invocable: false\n")
    assert [s.name for s in SkillsLoader(project=project).skills.invocable()] == ["shown"]


def test_loader_lists_invocable_skills_like_its_snapshot(tmp_path: Path) -> None:
    for name, invocable in (("shown", "true"), ("background", "false")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\nuser-invocable: {invocable}\n---\nbody\n")
    loader = SkillsLoader(project=tmp_path)
    assert [s.name for s in loader.invocable()] == ["shown"]
