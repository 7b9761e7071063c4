"""``read_file``, ``write_file`` and ``list_directory``, confined to a workspace.

A path outside the workspace, or on one of its protected paths (what
configures toolsift), is the caller's mistake and raises ``PolicyDenied``
(the registry audits it, the serving pipeline turns it into a tool error); a
file that is missing, too large or not text is an ordinary tool failure and
comes back as an error result. ``list_directory`` leaves protected entries
out, as if they were not there.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Annotated, Any

import mcp.types as mcp_types
from pydantic import Field

from ..registry import Level, ToolResult
from ..registry._internal import FunctionTool
from ._workspace import Workspace

__all__ = ["FileTools"]

DEFAULT_MAX_READ_BYTES = 1024 * 1024
DEFAULT_MAX_ENTRIES = 1000

PathArg = Annotated[str, Field(description="A path relative to the workspace root (absolute paths must lie inside it)")]


def _failure(tool: str, path: str, exc: OSError) -> ToolResult:
    reasons = {
        FileNotFoundError: "does not exist",
        IsADirectoryError: "is a directory",
        NotADirectoryError: "is not a directory (or a parent is a file)",
        PermissionError: "cannot be accessed (permission denied)",
    }
    reason = reasons.get(type(exc), f"failed: {exc.strerror or exc}")
    return ToolResult.error(f"{tool}: {path!r} {reason}")


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "directory"
    return "file" if stat.S_ISREG(mode) else "other"


class FileTools:
    """The file tools of one workspace.

    Args:
        workspace: The folder the tools are confined to.
        max_read_bytes: Largest file ``read_file`` returns.
        max_entries: Most entries ``list_directory`` returns.
    """

    def __init__(
        self,
        workspace: Workspace,
        *,
        max_read_bytes: int = DEFAULT_MAX_READ_BYTES,
        max_entries: int = DEFAULT_MAX_ENTRIES,
    ) -> None:
        if max_read_bytes <= 0 or max_entries <= 0:
            raise ValueError(
                f"max_read_bytes and max_entries must be positive, got {max_read_bytes!r} and {max_entries!r}"
            )
        self._workspace = workspace
        self._max_read_bytes = max_read_bytes
        self._max_entries = max_entries

    def tools(self) -> list[FunctionTool]:
        """The three tools, ready to register."""
        reading = mcp_types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
        writing = mcp_types.ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        )
        return [
            FunctionTool(self.read_file, read_only=True, required_level=Level.READ, annotations=reading),
            FunctionTool(self.write_file, required_level=Level.WRITE, annotations=writing),
            FunctionTool(self.list_directory, read_only=True, required_level=Level.READ, annotations=reading),
        ]

    def read_file(self, path: PathArg) -> ToolResult:
        """Read a UTF-8 text file from the workspace and return its content."""
        real = self._workspace.resolve(path, tool="read_file")
        try:
            with real.open("rb") as handle:
                data = handle.read(self._max_read_bytes + 1)
        except OSError as exc:
            return _failure("read_file", path, exc)
        if len(data) > self._max_read_bytes:
            return ToolResult.error(
                f"read_file: {path!r} is larger than the limit of {self._max_read_bytes:,} bytes; "
                "read a smaller file, or use exec_shell with a program such as head if one is allowed"
            )
        try:
            return ToolResult.text(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            return ToolResult.error(f"read_file: {path!r} is not UTF-8 text (invalid byte at offset {exc.start})")

    def write_file(
        self,
        path: PathArg,
        content: Annotated[str, Field(description="The text to write, UTF-8 encoded")],
        append: Annotated[bool, Field(description="Append to the file instead of replacing it")] = False,
    ) -> ToolResult:
        """Write text to a file in the workspace, creating it and its folders if needed."""
        real = self._workspace.resolve(path, tool="write_file")
        data = content.encode("utf-8")
        # O_NOFOLLOW: a link put in place after resolve() cannot redirect the write.
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if append else os.O_TRUNC)
        try:
            real.parent.mkdir(parents=True, exist_ok=True)
            with os.fdopen(os.open(real, flags, 0o666), "wb") as handle:
                handle.write(data)
        except OSError as exc:
            return _failure("write_file", path, exc)
        relative = self._workspace.relative(real)
        verb = "Appended" if append else "Wrote"
        return ToolResult.text(
            f"{verb} {len(data):,} bytes to {relative!r}",
            structured={"path": relative, "bytes": len(data), "appended": append},
        )

    def list_directory(self, path: PathArg = ".") -> ToolResult:
        """List a folder of the workspace: one entry per line, folders end with '/', links with '@'."""
        guard = self._workspace.guard()
        real = self._workspace.resolve(path, tool="list_directory", guard=guard)
        entries: list[dict[str, Any]] = []
        try:
            with os.scandir(real) as scan:
                # What configures toolsift is left out: its names alone can tell where secrets are.
                found = sorted(
                    (entry for entry in scan if guard.covering(Path(os.path.realpath(entry.path))) is None),
                    key=lambda entry: entry.name,
                )
            for entry in found[: self._max_entries]:
                info = entry.stat(follow_symlinks=False)
                kind = _kind(info.st_mode)
                entries.append({"name": entry.name, "type": kind, "size": info.st_size if kind == "file" else None})
        except OSError as exc:
            return _failure("list_directory", path, exc)
        suffix = {"directory": "/", "symlink": "@"}
        lines = [entry["name"] + suffix.get(entry["type"], "") for entry in entries]
        truncated = len(found) > self._max_entries
        if truncated:
            lines.append(f"[{len(found) - self._max_entries:,} more entries not shown]")
        relative = self._workspace.relative(real)
        text = "\n".join(lines) if lines else f"{relative!r} is empty"
        return ToolResult.text(text, structured={"path": relative, "entries": entries, "truncated": truncated})
