"""Builtin tools: files and programs, confined to a workspace folder.

``builtin_tools(workspace, commands=...)`` returns ``read_file``,
``write_file``, ``list_directory`` and ``exec_shell`` as registry tools with
bare names. No path they accept can leave the workspace (``..``, absolute
paths and symbolic links are resolved first) or touch what configures
toolsift (:func:`protected_paths`: config, env and secret files, skill
folders, toolsift's stores), and ``exec_shell`` runs only programs on the
:class:`CommandPolicy` allowlist, without a shell, inside a bubblewrap sandbox
where the workspace is the only writable folder, with a time and an output
budget.

This package imports nothing of toolsift but the registry and the config.
"""

from .._public import publish
from ._commands import CommandPolicy as CommandPolicy
from ._protected import protected_paths as protected_paths
from ._tools import builtin_tools as builtin_tools
from ._workspace import Workspace as Workspace

__all__ = [
    "CommandPolicy",
    "Workspace",
    "builtin_tools",
    "protected_paths",
]

publish(globals(), __name__, __all__)
