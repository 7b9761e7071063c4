"""Builtin file tools: confinement to the workspace, and every way a file operation fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolsift import ConfigError, PolicyDenied
from toolsift.builtins import Workspace, builtin_tools
from toolsift.builtins._files import FileTools
from toolsift.registry import Level, Permissions, ToolRegistry

EXECUTE = Permissions(level=Level.EXECUTE)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.txt").write_text("alpha\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("outside\n", encoding="utf-8")
    return root


@pytest.fixture
def registry(workspace: Path) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_many(builtin_tools(workspace, max_read_bytes=64))
    return registry


def test_workspace_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not an existing directory"):
        Workspace(tmp_path / "missing")


def test_workspace_resolves_inside_paths(workspace: Path) -> None:
    root = Workspace(workspace)
    assert root.resolve("docs/../docs/a.txt") == workspace.resolve() / "docs" / "a.txt"
    assert root.resolve(str(workspace / "docs")) == workspace.resolve() / "docs"
    assert root.relative(root.resolve(".")) == "."
    assert repr(root).startswith("Workspace(")


@pytest.mark.parametrize("path", ["../secret.txt", "docs/../../secret.txt", "/etc/passwd"])
def test_workspace_refuses_paths_outside(workspace: Path, path: str) -> None:
    with pytest.raises(PolicyDenied, match="outside the workspace"):
        Workspace(workspace).resolve(path, tool="read_file")


def test_workspace_refuses_symlink_escape(workspace: Path) -> None:
    (workspace / "link").symlink_to(workspace.parent / "secret.txt")
    with pytest.raises(PolicyDenied, match="through a symbolic link"):
        Workspace(workspace).resolve("link")


@pytest.mark.parametrize("path", ["", "a\0b", 7])
def test_workspace_refuses_malformed_paths(workspace: Path, path: object) -> None:
    with pytest.raises(PolicyDenied, match="workspace policy"):
        Workspace(workspace).resolve(path)


async def test_read_file_returns_text(registry: ToolRegistry) -> None:
    result = await registry.execute("read_file", {"path": "docs/a.txt"})
    assert (result.is_error, result.text_content()) == (False, "alpha\n")


async def test_read_file_escape_raises_policy_denied(registry: ToolRegistry) -> None:
    with pytest.raises(PolicyDenied, match="'../secret.txt' resolves to"):
        await registry.execute("read_file", {"path": "../secret.txt"})


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.txt", None, "does not exist"),
        ("docs", None, "is a directory"),
        ("big.txt", "x" * 65, "larger than the limit of 64 bytes"),
        ("bin.dat", b"\xff\xfe", "is not UTF-8 text"),
    ],
)
async def test_read_file_failures_are_error_results(
    registry: ToolRegistry, workspace: Path, name: str, content: str | bytes | None, message: str
) -> None:
    if isinstance(content, str):
        (workspace / name).write_text(content, encoding="utf-8")
    elif isinstance(content, bytes):
        (workspace / name).write_bytes(content)
    result = await registry.execute("read_file", {"path": name})
    assert result.is_error
    assert message in result.text_content()


async def test_write_file_creates_folders_and_appends(registry: ToolRegistry, workspace: Path) -> None:
    first = await registry.execute("write_file", {"path": "new/dir/b.txt", "content": "one"})
    second = await registry.execute("write_file", {"path": "new/dir/b.txt", "content": "+two", "append": True})
    assert first.structured_content == {"path": "new/dir/b.txt", "bytes": 3, "appended": False}
    assert second.text_content() == "Appended 4 bytes to 'new/dir/b.txt'"
    assert (workspace / "new" / "dir" / "b.txt").read_text(encoding="utf-8") == "one+two"


async def test_write_file_refuses_symlinked_target(registry: ToolRegistry, workspace: Path) -> None:
    (workspace / "out").symlink_to(workspace.parent / "secret.txt")
    with pytest.raises(PolicyDenied, match="outside the workspace"):
        await registry.execute("write_file", {"path": "out", "content": "pwned"})
    assert (workspace.parent / "secret.txt").read_text(encoding="utf-8") == "outside\n"


async def test_write_file_onto_a_directory_is_an_error(registry: ToolRegistry) -> None:
    result = await registry.execute("write_file", {"path": "docs", "content": "x"})
    assert result.is_error
    assert result.text_content() == "write_file: 'docs' is a directory"


async def test_write_file_into_unwritable_folder_is_an_error(registry: ToolRegistry, workspace: Path) -> None:
    (workspace / "file").write_text("x", encoding="utf-8")
    result = await registry.execute("write_file", {"path": "file/inner.txt", "content": "x"})
    assert result.is_error
    assert "'file/inner.txt'" in result.text_content()


async def test_list_directory_marks_folders_and_links(registry: ToolRegistry, workspace: Path) -> None:
    (workspace / "link").symlink_to(workspace / "docs")
    result = await registry.execute("list_directory", {})
    assert result.text_content() == "docs/\nlink@"
    nested = await registry.execute("list_directory", {"path": "docs"})
    assert nested.structured_content == {
        "path": "docs",
        "entries": [{"name": "a.txt", "type": "file", "size": 6}],
        "truncated": False,
    }


async def test_list_directory_of_empty_and_missing_folders(registry: ToolRegistry, workspace: Path) -> None:
    (workspace / "empty").mkdir()
    assert (await registry.execute("list_directory", {"path": "empty"})).text_content() == "'empty' is empty"
    missing = await registry.execute("list_directory", {"path": "nope"})
    assert missing.is_error
    assert "does not exist" in missing.text_content()


async def test_list_directory_caps_entries(workspace: Path) -> None:
    for index in range(5):
        (workspace / f"f{index}").write_text("", encoding="utf-8")
    registry = ToolRegistry()
    registry.register_many(FileTools(Workspace(workspace), max_entries=3).tools())
    result = await registry.execute("list_directory", {})
    assert result.text_content().endswith("[3 more entries not shown]")
    assert result.structured_content["truncated"] is True


def test_file_tools_limits_must_be_positive(workspace: Path) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        FileTools(Workspace(workspace), max_read_bytes=0)


def test_builtin_levels_and_read_only_flags(registry: ToolRegistry) -> None:
    specs = {tool.spec.name: tool.spec for tool in registry}
    assert {name: (spec.required_level, spec.read_only) for name, spec in specs.items()} == {
        "read_file": (Level.READ, True),
        "write_file": (Level.WRITE, False),
        "list_directory": (Level.READ, True),
        "exec_shell": (Level.EXECUTE, False),
    }
    assert specs["read_file"].input_schema["properties"]["path"]["description"].startswith("A path relative")


async def test_plan_mode_keeps_only_reading_tools(registry: ToolRegistry) -> None:
    from toolsift.registry import TurnScope

    visible = [tool.spec.name for tool in registry.visible_tools(TurnScope(read_only=True))]
    assert visible == ["read_file", "list_directory"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
async def test_read_file_permission_denied_is_an_error(registry: ToolRegistry, workspace: Path) -> None:
    locked = workspace / "locked.txt"
    locked.write_text("x", encoding="utf-8")
    locked.chmod(0)
    result = await registry.execute("read_file", {"path": "locked.txt"})
    assert "permission denied" in result.text_content()
