"""Keeping a path argument inside the workspace, with or without knowing where it is.

With the workspace's real path, a path is resolved the way the program will
resolve it (symbolic links followed) and must land inside. Without it (a
command checked before it reaches another server's tool), only its spelling
can be judged: it must be relative and must not climb out with ``..``.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

__all__ = ["confine"]


def confine(value: str, *, cwd: PurePosixPath, workspace: Path | None) -> PurePosixPath | None:
    """Where ``value``, taken from ``cwd`` (relative to the workspace), lands; None when outside.

    Returns:
        The landing folder relative to the workspace (``.`` for the root), or None.
    """
    path = PurePosixPath(value)
    if path.is_absolute():
        if workspace is None:
            return None
        return _inside(Path(os.path.realpath(path)), workspace)
    joined = PurePosixPath(os.path.normpath(cwd / path))
    if joined.parts[:1] == ("..",):
        return None
    if workspace is None:
        return joined
    return _inside(Path(os.path.realpath(workspace / joined)), workspace)


def _inside(real: Path, workspace: Path) -> PurePosixPath | None:
    if real != workspace and workspace not in real.parents:
        return None
    return PurePosixPath(real.relative_to(workspace).as_posix())
