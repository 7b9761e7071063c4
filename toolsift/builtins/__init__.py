"""Builtin tools: files and programs, confined to a workspace folder.

``builtin_tools(workspace, commands=...)`` returns ``read_file``,
``write_file``, ``list_directory`` and ``exec_shell`` as registry tools with
bare names. No path they accept can leave the workspace (``..``, absolute
paths and symbolic links are resolved first), and ``exec_shell`` runs only
programs on the :class:`CommandPolicy` allowlist, with arguments their
program's policy accepts (:mod:`toolsift.builtins.arguments`), without a
shell, under a timeout and an output cap.

This package imports nothing of toolsift but the registry.
"""

from .._public import publish
from ._commands import SHELL_METACHARACTERS as SHELL_METACHARACTERS
from ._commands import CommandPolicy as CommandPolicy
from ._files import FileTools as FileTools
from ._shell import ShellTool as ShellTool
from ._tools import builtin_tools as builtin_tools
from ._workspace import Workspace as Workspace

__all__ = [
    "SHELL_METACHARACTERS",
    "CommandPolicy",
    "FileTools",
    "ShellTool",
    "Workspace",
    "builtin_tools",
]

publish(globals(), __name__, __all__)
