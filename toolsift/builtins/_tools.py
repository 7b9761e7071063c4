"""All builtin tools of one workspace, in one call."""

from __future__ import annotations

import os
from pathlib import Path

from ..registry._internal import FunctionTool
from ._commands import CommandPolicy
from ._files import DEFAULT_MAX_READ_BYTES, FileTools
from ._shell import ShellTool
from ._workspace import Workspace

__all__ = ["builtin_tool_names", "builtin_tools"]


def builtin_tools(
    workspace: Workspace | str | os.PathLike[str],
    *,
    commands: CommandPolicy | None = None,
    max_read_bytes: int = DEFAULT_MAX_READ_BYTES,
    bwrap: str | os.PathLike[str] | None = None,
) -> list[FunctionTool]:
    """``read_file``, ``write_file``, ``list_directory`` and ``exec_shell``, confined to ``workspace``.

    Register them with bare names (``registry.register_many(builtin_tools(...))``);
    ``toolsift serve`` shows them as ``builtin__read_file`` and so on.

    Levels: ``read_file`` and ``list_directory`` require ``read`` (and are
    read-only, so plan mode keeps them), ``write_file`` requires ``write``,
    ``exec_shell`` requires ``execute``.

    Args:
        workspace: The folder the tools may touch (a :class:`Workspace` carries
            the protected paths too).
        commands: What ``exec_shell`` may run; the default allows no program, so
            ``exec_shell`` refuses every command and says how to allow one.
        max_read_bytes: Largest file ``read_file`` returns.
        bwrap: The bubblewrap program ``exec_shell`` runs programs under;
            default: ``bwrap`` on ``PATH``.

    Raises:
        ConfigError: When ``workspace`` is not an existing directory.
    """
    root = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    files = FileTools(root, max_read_bytes=max_read_bytes).tools()
    shell = ShellTool(root, commands if commands is not None else CommandPolicy(), bwrap=bwrap)
    return [*files, shell.tool()]


def builtin_tool_names() -> tuple[str, ...]:
    """The builtin tools' (bare) names, without a workspace: for checks that run nothing."""
    # The names do not depend on the workspace: this package's own folder is one that exists.
    return tuple(tool.spec.name for tool in builtin_tools(Path(__file__).resolve().parent))
