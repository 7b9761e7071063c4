"""Placeholders: the empty folders that hold a missing protected file's name while programs run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from toolsift.builtins._placeholders import Placeholders


@pytest.fixture
def locks(tmp_path: Path) -> Path:
    return tmp_path / "user" / "placeholders"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    made = tmp_path / "ws"
    made.mkdir()
    return made


def test_a_placeholder_is_an_empty_folder_removed_on_release(ws: Path, locks: Path) -> None:
    held = Placeholders(locks)
    assert held.hold(ws / "app.env")
    assert (ws / "app.env").is_dir() and list((ws / "app.env").iterdir()) == []
    held.release()
    assert not (ws / "app.env").exists()
    held.release()  # twice is nothing


def test_a_placeholder_stays_while_another_run_holds_it(ws: Path, locks: Path) -> None:
    first, second = Placeholders(locks), Placeholders(locks)
    assert first.hold(ws / ".mcp.json")
    assert second.hold(ws / ".mcp.json")  # made by the first: joined, not mistaken for the user's
    first.release()
    assert (ws / ".mcp.json").is_dir()
    second.release()
    assert not (ws / ".mcp.json").exists()


def test_the_users_own_folder_or_file_is_no_placeholder_and_stays(ws: Path, locks: Path) -> None:
    (ws / ".vscode").mkdir()
    (ws / "app.env").write_text("A=1\n", encoding="utf-8")
    held = Placeholders(locks)
    assert not held.hold(ws / ".vscode")
    assert not held.hold(ws / "app.env")
    held.release()
    assert (ws / ".vscode").is_dir() and (ws / "app.env").read_text(encoding="utf-8") == "A=1\n"


def test_a_placeholder_left_by_a_killed_run_goes_after_the_next_run(ws: Path, locks: Path) -> None:
    held_then_killed = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from toolsift.builtins._placeholders import Placeholders\n"
        "assert Placeholders(Path(sys.argv[1])).hold(Path(sys.argv[2]))\n"
        "os._exit(0)  # no release: as a process killed mid-run\n"
    )
    subprocess.run([sys.executable, "-c", held_then_killed, str(locks), str(ws / "app.env")], check=True)
    assert (ws / "app.env").is_dir()
    later = Placeholders(locks)
    assert later.hold(ws / "app.env")  # recognised as toolsift's
    later.release()
    assert not (ws / "app.env").exists()


def test_a_folder_the_user_replaced_the_placeholder_with_is_left_alone(ws: Path, locks: Path) -> None:
    held = Placeholders(locks)
    assert held.hold(ws / "app.env")
    (ws / "app.env").rename(ws / "moved")
    (ws / "app.env").mkdir()  # another folder by the same name (made while the first exists: another inode)
    (ws / "moved").rmdir()
    held.release()
    assert (ws / "app.env").is_dir()


def test_a_placeholder_with_something_in_it_is_left_alone(ws: Path, locks: Path) -> None:
    held = Placeholders(locks)
    assert held.hold(ws / "app.env")
    (ws / "app.env" / "kept").write_text("x", encoding="utf-8")
    held.release()
    assert (ws / "app.env" / "kept").read_text(encoding="utf-8") == "x"


def test_a_placeholder_that_cannot_be_made_raises(tmp_path: Path, locks: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Placeholders(locks).hold(tmp_path / "missing-folder" / "app.env")
