"""The workspace: the one folder builtin file tools may touch, minus what configures toolsift.

Every path a tool receives is resolved to a real path (``..`` collapsed,
every symbolic link followed) before it is checked, so neither ``../..``,
an absolute path nor a link that points outside can reach past the root.
Absolute paths are accepted when they land inside, because clients
(IDEs, Claude Code) habitually send them.

The same check refuses the protected paths (:func:`protected_paths`): the
config files, env and secret files, skill folders and toolsift's own stores.
They are compared by their real paths, taken again at each check (a link
made later cannot lead around them), and existing protected files also by
inode, so a hard link to one is refused too.

A link swapped in between the check and the use is the one race a check in
user space cannot close; writes open the final component with
``O_NOFOLLOW`` so at least that step cannot be redirected.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from .._exceptions import ConfigError, PolicyDenied
from ._protected import ProtectedPath, within

__all__ = ["ProtectionGuard", "Workspace"]

Protected = Iterable[ProtectedPath] | Callable[[], Iterable[ProtectedPath]]


class ProtectionGuard:
    """The protected paths as they are now: real paths, and the inodes of existing files.

    Take one per operation (:meth:`Workspace.guard`); it does not follow
    later changes on disk.
    """

    def __init__(self, entries: Iterable[ProtectedPath]) -> None:
        self.entries = tuple(entries)
        self._spots: list[tuple[Path, ProtectedPath]] = []
        self._inodes: dict[tuple[int, int], ProtectedPath] = {}
        for entry in self.entries:
            for spot in {entry.path, Path(os.path.realpath(entry.path))}:
                self._spots.append((spot, entry))
            try:
                info = entry.path.stat()
            except OSError:
                continue  # not there (yet): its paths still count
            if not entry.folder and os.path.isfile(entry.path):
                self._inodes[(info.st_dev, info.st_ino)] = entry

    def covering(self, real: Path) -> ProtectedPath | None:
        """The entry that protects ``real`` (a resolved path), or None."""
        for spot, entry in self._spots:
            if within(real, spot):
                return entry
        if self._inodes:
            try:
                info = real.stat()
            except OSError:
                return None
            return self._inodes.get((info.st_dev, info.st_ino))
        return None

    def refuse(self, real: Path, named: str, *, policy: str, tool: str | None, rule: str) -> None:
        """Raise when ``real`` (what ``named`` resolves to) is protected: by its path, or as a hard link to one.

        Raises:
            PolicyDenied: Naming the path, the protected one and why, then ``rule``.
        """
        entry = self.covering(real)
        if entry is None:
            return
        if any(found is entry and within(real, spot) for spot, found in self._spots):
            where = f"resolves to {str(real)!r}, {'inside' if entry.folder else 'at'} {str(entry.path)!r}"
        else:
            where = f"is a hard link to {str(entry.path)!r}"
        raise PolicyDenied(policy, f"{named} {where}: {entry.reason}; {rule}", tool=tool)


class Workspace:
    """A folder, resolved once, and the check that keeps paths inside it and off protected ones.

    Args:
        root: The folder; ``~`` is expanded and symbolic links are resolved.
        protected: What builtin tools never touch (see :func:`protected_paths`),
            or a function returning it, asked at each check, so that the set
            can follow a config that changes while serving.

    Raises:
        ConfigError: When ``root`` is not an existing directory.
    """

    def __init__(self, root: str | os.PathLike[str], *, protected: Protected = ()) -> None:
        given = Path(root).expanduser()
        real = Path(os.path.realpath(given))
        if not real.is_dir():
            raise ConfigError(f"the workspace {str(given)!r} is not an existing directory", field="workspace")
        self._root = real
        if callable(protected):
            self._protected: Callable[[], Iterable[ProtectedPath]] = protected
        else:
            fixed = tuple(protected)
            self._protected = lambda: fixed

    @property
    def root(self) -> Path:
        """The real path of the workspace folder."""
        return self._root

    @property
    def protected(self) -> tuple[ProtectedPath, ...]:
        """The protected paths in force now."""
        return tuple(self._protected())

    def guard(self) -> ProtectionGuard:
        """A snapshot of the protected paths, for one operation."""
        return ProtectionGuard(self._protected())

    def __repr__(self) -> str:
        return f"Workspace({str(self._root)!r})"

    def resolve(self, path: object, *, tool: str | None = None, guard: ProtectionGuard | None = None) -> Path:
        """The real path ``path`` names, checked to be inside the workspace and not protected.

        Relative paths are taken from the workspace root. The file need not
        exist (``write_file`` creates files).

        Args:
            path: What the caller sent.
            tool: The tool asking, for the message.
            guard: The protected paths to check against; default: those in force now.

        Raises:
            PolicyDenied: When ``path`` is not a non-empty string, holds a NUL
                character, resolves to somewhere outside the workspace, or
                to a protected path (one that configures toolsift).
        """
        real = self.confine(path, tool=tool)
        (guard or self.guard()).refuse(
            real,
            f"the path {path!r}",
            policy="workspace",
            tool=tool,
            rule="builtin tools never read or write what configures toolsift",
        )
        return real

    def confine(self, path: object, *, tool: str | None = None) -> Path:
        """The real path ``path`` names, checked to be inside the workspace only (see :meth:`resolve`).

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
        if not within(real, self._root):
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
