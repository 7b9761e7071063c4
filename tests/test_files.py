"""Files toolsift writes: never through a link or a second name a program could have planted."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from toolsift import ToolsiftError
from toolsift._files import OwnFile, UnsafeFile, write_atomically

FIX = "toolsift does not write through links a program could have planted; remove it"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the folder toolsift writes in: what a planted link would lead to."""
    target = tmp_path / "outside" / ".bashrc"
    target.parent.mkdir()
    target.write_text("alias ls='ls --color'\n", encoding="utf-8")
    return target


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    made = tmp_path / "project"
    made.mkdir()
    return made


def test_append_creates_a_private_file_and_appends_lines(folder: Path) -> None:
    file = OwnFile(folder / "audit.jsonl", what="audit log")
    file.append("one\n")
    file.append("two\n")
    assert (folder / "audit.jsonl").read_text(encoding="utf-8") == "one\ntwo\n"
    assert stat.S_IMODE((folder / "audit.jsonl").stat().st_mode) == 0o600


def test_append_refuses_a_symbolic_link_and_leaves_its_target_as_it_was(folder: Path, outside: Path) -> None:
    (folder / "audit.jsonl").symlink_to(outside)
    with pytest.raises(UnsafeFile, match="is a symbolic link") as refused:
        OwnFile(folder / "audit.jsonl", what="audit log").append('{"path": "$(touch PWNED)"}\n')
    assert str(refused.value) == f"audit log {folder / 'audit.jsonl'} is a symbolic link; {FIX}"
    assert refused.value.path == folder / "audit.jsonl"
    assert outside.read_text(encoding="utf-8") == "alias ls='ls --color'\n"


def test_append_refuses_a_dangling_link_and_creates_nothing_where_it_points(folder: Path, tmp_path: Path) -> None:
    (folder / "audit.jsonl").symlink_to(tmp_path / "autostart.desktop")
    with pytest.raises(UnsafeFile, match="is a symbolic link"):
        OwnFile(folder / "audit.jsonl", what="audit log").append("x\n")
    assert not (tmp_path / "autostart.desktop").exists()


def test_append_refuses_a_hard_link_and_leaves_the_other_name_as_it_was(folder: Path) -> None:
    (folder / "server.py").write_text("print('hi')\n", encoding="utf-8")
    os.link(folder / "server.py", folder / "audit.jsonl")
    with pytest.raises(UnsafeFile, match=r"has 2 hard links \(other names for the same file\); toolsift does not"):
        OwnFile(folder / "audit.jsonl", what="audit log").append("import os\n")
    assert (folder / "server.py").read_text(encoding="utf-8") == "print('hi')\n"


def test_create_checks_an_existing_file_as_append_does(folder: Path, outside: Path) -> None:
    (folder / "audit.jsonl").symlink_to(outside)
    with pytest.raises(UnsafeFile, match="is a symbolic link"):
        OwnFile(folder / "audit.jsonl", what="audit log").create()
    (folder / "kept.jsonl").write_text("kept\n", encoding="utf-8")
    OwnFile(folder / "kept.jsonl", what="audit log").create()
    assert (folder / "kept.jsonl").read_text(encoding="utf-8") == "kept\n"  # created only when missing


def test_append_refuses_a_named_pipe_at_once(folder: Path) -> None:
    os.mkfifo(folder / "audit.jsonl")
    with pytest.raises(UnsafeFile, match="is not a regular file"):
        OwnFile(folder / "audit.jsonl", what="audit log").append("x\n")


def test_append_refuses_a_folder_made_a_link_after_the_file_was_set_up(folder: Path, tmp_path: Path) -> None:
    (folder / "logs").mkdir()
    file = OwnFile(folder / "logs" / "audit.jsonl", what="audit log")
    file.append("first\n")
    (folder / "logs").rename(folder / "old-logs")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (folder / "logs").symlink_to(elsewhere)
    with pytest.raises(UnsafeFile, match="lies in .*logs, which has become a symbolic link since toolsift first"):
        file.append("second\n")
    assert list(elsewhere.iterdir()) == []


def test_links_in_the_folders_at_setup_are_the_users_and_followed(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "config"
    real.mkdir(parents=True)
    (tmp_path / ".config").symlink_to(real)  # a user's stowed dotfiles
    OwnFile(tmp_path / ".config" / "audit.jsonl", what="audit log").append("line\n")
    write_atomically(tmp_path / ".config" / "store.json", "{}\n", what="a store")
    assert (real / "audit.jsonl").read_text(encoding="utf-8") == "line\n"
    assert (real / "store.json").read_text(encoding="utf-8") == "{}\n"


def test_replace_puts_a_file_in_place_of_a_link_and_never_writes_through_it(folder: Path, outside: Path) -> None:
    (folder / "pins.json").symlink_to(outside)
    write_atomically(folder / "pins.json", b'{"version": 2}\n', what="pinned tool definitions")
    assert not (folder / "pins.json").is_symlink()
    assert (folder / "pins.json").read_bytes() == b'{"version": 2}\n'
    assert stat.S_IMODE((folder / "pins.json").stat().st_mode) == 0o600
    assert outside.read_text(encoding="utf-8") == "alias ls='ls --color'\n"
    assert sorted(p.name for p in folder.iterdir()) == ["pins.json"]  # no temporary file left


def test_replace_leaves_a_hard_links_other_name_as_it_was(folder: Path) -> None:
    (folder / "server.py").write_text("print('hi')\n", encoding="utf-8")
    os.link(folder / "server.py", folder / "cache.npz")
    write_atomically(folder / "cache.npz", b"new", what="the embedding cache")
    assert (folder / "server.py").read_text(encoding="utf-8") == "print('hi')\n"


def test_replace_refuses_a_folder_made_a_link_after_the_file_was_set_up(folder: Path, tmp_path: Path) -> None:
    (folder / "state").mkdir()
    file = OwnFile(folder / "state" / "grants.json", what="the skill grants store")
    (folder / "state").rmdir()
    (folder / "state").symlink_to(tmp_path)
    with pytest.raises(UnsafeFile, match="which has become a symbolic link"):
        file.replace("{}")
    assert not (tmp_path / "grants.json").exists()


def test_replace_in_a_missing_folder_fails_and_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomically(tmp_path / "missing" / "store.json", "{}", what="a store")
    assert list(tmp_path.iterdir()) == []


def test_create_new_refuses_any_existing_name_a_dangling_link_included(folder: Path, tmp_path: Path) -> None:
    (folder / "SKILL.md").symlink_to(tmp_path / "planted.md")
    with pytest.raises(FileExistsError):
        OwnFile(folder / "SKILL.md", what="the skill").create_new("---\nname: x\n---\n")
    assert not (tmp_path / "planted.md").exists()
    OwnFile(folder / "new.md", what="the skill").create_new("text")
    assert (folder / "new.md").read_text(encoding="utf-8") == "text"


def test_an_unsafe_file_is_a_toolsift_error_and_an_os_error(folder: Path, outside: Path) -> None:
    (folder / "audit.jsonl").symlink_to(outside)
    with pytest.raises(ToolsiftError) as caught:
        OwnFile(folder / "audit.jsonl", what="audit log").append("x")
    assert isinstance(caught.value, OSError)
    assert repr(OwnFile("x.json", what="a store")) == f"OwnFile({str(Path.cwd() / 'x.json')!r}, what='a store')"


def test_append_refuses_a_device_in_the_files_place() -> None:
    with pytest.raises(UnsafeFile, match="audit log /dev/null is not a regular file"):
        OwnFile("/dev/null", what="audit log").append("x\n")


def test_replace_that_fails_leaves_no_temporary_file(folder: Path) -> None:
    (folder / "store.json").mkdir()
    (folder / "store.json" / "kept").write_text("x", encoding="utf-8")  # a folder cannot be replaced by a file
    with pytest.raises(IsADirectoryError):
        write_atomically(folder / "store.json", "{}", what="a store")
    assert sorted(path.name for path in folder.iterdir()) == ["store.json"]


def test_remove_removes_the_file_or_a_link_in_its_place_never_what_it_points_to(folder: Path, outside: Path) -> None:
    file = OwnFile(folder / "record", what="used approval record")
    file.create()
    file.remove()
    assert not (folder / "record").exists()
    file.remove()  # already gone: nothing to do
    (folder / "record").symlink_to(outside)
    file.remove()
    assert not (folder / "record").is_symlink() and outside.read_text(encoding="utf-8") == "alias ls='ls --color'\n"


def test_remove_refuses_a_folder_made_a_link_after_the_file_was_set_up(folder: Path, tmp_path: Path) -> None:
    (folder / "used").mkdir()
    file = OwnFile(folder / "used" / "record", what="used approval record")
    (folder / "used").rename(folder / "old")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "record").write_text("kept", encoding="utf-8")
    (folder / "used").symlink_to(elsewhere)
    with pytest.raises(UnsafeFile, match="has become a symbolic link"):
        file.remove()
    assert (elsewhere / "record").read_text(encoding="utf-8") == "kept"
