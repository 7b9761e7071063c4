"""The sandbox's plan for missing protected paths, read as the bubblewrap arguments it gives (no sandbox run)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from toolsift.builtins._placeholders import Placeholders
from toolsift.builtins._protected import ProtectedPath
from toolsift.builtins._sandbox_plan import Plan, SandboxUnavailable


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    made = tmp_path / "ws"
    (made / "config").mkdir(parents=True)
    (made / "notes").write_text("a file\n", encoding="utf-8")
    return made


def planned(ws: Path, locks: Path, *entries: ProtectedPath) -> tuple[list[str], Placeholders]:
    placeholders = Placeholders(locks)
    plan = Plan(ws, placeholders)
    for entry in entries:
        plan.add(entry)
    return plan.arguments(), placeholders


def test_toolsifts_own_missing_file_is_created_private_and_hidden(ws: Path, tmp_path: Path) -> None:
    arguments, held = planned(ws, tmp_path / "locks", ProtectedPath(ws / "audit.jsonl", "the audit log", own=True))
    assert stat.S_IMODE((ws / "audit.jsonl").stat().st_mode) == 0o600
    assert arguments == ["--ro-bind", "/dev/null", str(ws / "audit.jsonl")]
    held.release()
    assert (ws / "audit.jsonl").is_file()  # toolsift's own: it stays


def test_a_missing_file_directly_in_the_workspace_is_held_by_a_placeholder(ws: Path, tmp_path: Path) -> None:
    arguments, held = planned(
        ws,
        tmp_path / "locks",
        ProtectedPath(ws / "app.env", "an env file"),
        ProtectedPath(ws / ".vscode" / "mcp.json", "a config file"),
    )
    assert arguments == [
        *["--tmpfs", str(ws / "app.env"), "--remount-ro", str(ws / "app.env")],
        *["--tmpfs", str(ws / ".vscode"), "--remount-ro", str(ws / ".vscode")],
    ]
    assert (ws / "app.env").is_dir() and (ws / ".vscode").is_dir()
    held.release()
    assert not (ws / "app.env").exists() and not (ws / ".vscode").exists()


def test_a_missing_file_deeper_makes_the_nearest_existing_path_read_only(ws: Path, tmp_path: Path) -> None:
    arguments, held = planned(
        ws,
        tmp_path / "locks",
        ProtectedPath(ws / "config" / "sub" / "prod.env", "an env file"),
        ProtectedPath(ws / "notes" / "x.env", "an env file"),  # a file stands where its folder would go
    )
    assert arguments == [
        "--ro-bind",
        str(ws / "config"),
        str(ws / "config"),
        "--ro-bind",
        str(ws / "notes"),
        str(ws / "notes"),
    ]
    held.release()
    assert sorted(path.name for path in ws.iterdir()) == ["config", "notes"]


def test_a_placeholder_that_cannot_be_held_refuses_the_command(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "not-a-folder").write_text("", encoding="utf-8")
    with pytest.raises(SandboxUnavailable) as refused:
        planned(ws, tmp_path / "not-a-folder" / "locks", ProtectedPath(ws / "app.env", "the env file of server 'x'"))
    assert str(refused.value).startswith(
        f"cannot keep programs from creating {str(ws / 'app.env')!r} (the env file of server 'x'): "
    )
    assert not (ws / "app.env").exists()
