"""The workspace: the one folder builtin file tools may touch.

Every path a tool receives is resolved to a real path (``..`` collapsed,
every symbolic link followed) before it is checked, so neither ``../..``,
an absolute path nor a link that points outside can reach past the root.
Absolute paths are accepted when they land inside, because clients
(IDEs, Claude Code) habitually send them.

A link swapped in between the check and the use is the one race a check in
user space cannot close; writes open the final component with
``O_NOFOLLOW`` so at least that step cannot be redirected.
"""

from __future__ import annotations

import os
from pathlib import Path

from .._exceptions import ConfigError, PolicyDenied

__all__ = ["Workspace"]


class Workspace:
    """A folder, resolved once, and the check that keeps paths inside it.

    Args:
        root: The folder; ``~`` is expanded and symbolic links are resolved.

    Raises:
        ConfigError: When ``root`` is not an existing directory.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        given = Path(root).expanduser()
        real = Path(os.path.realpath(given))
        if not real.is_dir():
            raise ConfigError(f"the workspace {str(given)!r} is not an existing directory", field="workspace")
        self._root = real

    @property
    def root(self) -> Path:
        """The real path of the workspace folder."""
        return self._root

    def __repr__(self) -> str:
        return f"Workspace({str(self._root)!r})"

    def resolve(self, path: object, *, tool: str | None = None) -> Path:
        """The real path ``path`` names, checked to be inside the workspace.

        Relative paths are taken from the workspace root. The file need not
        exist (``write_file`` creates files).

        Args:
            path: What the caller sent.
            tool: The tool asking, for the message.

        Raises:
            PolicyDenied: When ``path`` is not a non-empty string, holds a NUL
                character, or resolves to somewhere outside the workspace.
        """
        if not isinstance(path, str) or not path:
            raise PolicyDenied("workspace", f"expected a non-empty path string, got {path!r}", tool=tool)
        if "\0" in path:
            raise PolicyDenied("workspace", f"the path {path!r} contains a NUL character", tool=tool)
        candidate = Path(path)
        joined = candidate if candidate.is_absolute() else self._root / candidate
        real = Path(os.path.realpath(joined))
        if real != self._root and self._root not in real.parents:
            via = " through a symbolic link" if Path(os.path.normpath(joined)) != real else ""
            raise PolicyDenied(
                "workspace",
                f"the path {path!r} resolves{via} to {str(real)!r}, outside the workspace {str(self._root)!r}; "
                "builtin tools only reach files inside the workspace",
                tool=tool,
            )
        return real

    def relative(self, real: Path) -> str:
        """``real`` (a path from :meth:`resolve`) relative to the root, POSIX style; ``.`` for the root."""
        return real.relative_to(self._root).as_posix()
