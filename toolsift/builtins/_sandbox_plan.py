"""The mounts that keep one sandboxed command off the protected paths, and the system folders it sees.

Each protected path inside the workspace (or the system folders shown) is
hidden behind an empty read-only mount, and the folders between it and the
workspace are pinned by mounts of their own, so they cannot be renamed away.
A missing one must not be creatable either: a missing folder is made (empty)
and hidden; toolsift's own missing file (the audit log) is made, empty and
private; any other missing file makes its nearest existing path read-only,
or, where that would be the workspace itself, gets a placeholder (see
``_placeholders``) for the time the command runs.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .._files import OwnFile
from ._protected import ProtectedPath, within

if TYPE_CHECKING:
    from ._placeholders import Placeholders

__all__ = ["ETC", "SYSTEM", "Plan", "SandboxUnavailable", "mounted_system"]

# The system, read-only. Merged-/usr systems have links here, which the sandbox copies as links.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What programs need of /etc (libraries, users, names, time, certificates, alternatives such as awk);
# not the rest (/etc/shadow, SSH host keys, other programs' credentials).
ETC = (
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "passwd",
    "group",
    "nsswitch.conf",
    "hosts",
    "host.conf",
    "resolv.conf",
    "gai.conf",
    "protocols",
    "services",
    "localtime",
    "timezone",
    "ssl/certs",
    "ssl/openssl.cnf",
    "ca-certificates",
    "mime.types",
    "magic",
    "os-release",
    "debian_version",
    "locale.alias",
)
MountKind = Literal["hide-file", "hide-folder", "read-only", "keep"]
# When one path gets two mounts, the one that hides more wins.
_PRIORITY: dict[MountKind, int] = {"hide-file": 3, "hide-folder": 3, "read-only": 2, "keep": 1}


class SandboxUnavailable(Exception):
    """Raised when a program cannot run sandboxed here; the message says why. Never leaves this package."""


@dataclass(frozen=True)
class _Mount:
    """One step of hiding a protected path: ``hide`` it, pin it (``keep``), or make it ``read-only``."""

    path: Path
    kind: MountKind


def mounted_system() -> list[Path]:
    """The host paths the sandbox shows (besides the workspace), for finding protected paths among them."""
    return [Path(os.path.realpath(path)) for path in SYSTEM if os.path.exists(path)] + [
        Path("/etc") / name for name in ETC
    ]


def _components(path: Path, root: Path) -> list[Path]:
    """``path`` and the folders between it and ``root``, outermost first (``root`` left out)."""
    current, found = root, []
    for part in path.relative_to(root).parts:
        current = current / part
        found.append(current)
    return found


def _first_link(path: Path, root: Path) -> Path | None:
    """The first component of ``path`` below ``root`` that is a symbolic link, or None."""
    return next((component for component in _components(path, root) if component.is_symlink()), None)


def _empty_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode) and not any(os.scandir(path))
    except OSError:
        return False


class Plan:
    """The mounts that hide the protected paths from one command.

    Args:
        root: The workspace (a real path).
        placeholders: Where this command's placeholders are held until its sandbox is gone.
    """

    def __init__(self, root: Path, placeholders: Placeholders) -> None:
        self.root = root
        self.mounts: list[_Mount] = []
        self._placeholders = placeholders

    def add(self, entry: ProtectedPath) -> None:
        """Hide ``entry`` from the command, or keep it from being made when it is missing.

        Raises:
            SandboxUnavailable: When it cannot be hidden (see the messages).
        """
        lexical = entry.path
        real = Path(os.path.realpath(lexical))
        root = self.root
        if within(root, real) and entry.folder:
            raise SandboxUnavailable(
                f"the workspace {str(root)!r} lies inside {str(lexical)!r} ({entry.reason}), "
                "which programs must not reach"
            )
        if within(lexical, root) and self._settled_inside(lexical, entry):
            return
        if not os.path.exists(real):
            return
        links = real.stat().st_nlink if real.is_file() else 1
        if links > 1:
            # Its other names may lie anywhere on the same file system, the workspace included.
            raise SandboxUnavailable(
                f"{str(lexical)!r} ({entry.reason}) has {links} hard links; the sandbox hides "
                "this name but cannot find the others, so nothing runs until it has one"
            )
        if within(real, root) or any(within(real, shown) for shown in mounted_system()):
            self._pin(real, "hide-folder" if real.is_dir() else "hide-file")

    def _settled_inside(self, path: Path, entry: ProtectedPath) -> bool:
        """Pin the link on the way to ``path`` (in the workspace), or keep it from being made when missing.

        True when nothing is left to hide.
        """
        link = _first_link(path, self.root)
        if link is not None:
            # The link itself could be replaced: its folder is made read-only, unless that is the workspace.
            if link.parent == self.root:
                what = "is" if link == path else f"goes through {str(link)!r}, which is"
                raise SandboxUnavailable(
                    f"{str(path)!r} ({entry.reason}) {what} a symbolic link in the workspace, which a program "
                    "could replace; nothing runs until it is a plain file or folder, or lies outside the workspace"
                )
            self._pin(link.parent, "read-only")
            return False
        if entry.folder:
            if os.path.lexists(path):
                return False
            self._missing_folder(path, entry)
            return True
        if os.path.lexists(path) and not _empty_folder(path):
            return False
        return self._missing_file(path, entry)

    def _missing_folder(self, path: Path, entry: ProtectedPath) -> None:
        # Made (empty) so that it can be hidden: a skills folder a program created would load at once.
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SandboxUnavailable(
                f"cannot create {str(path)!r} ({entry.reason}) to hide it from programs: {exc.strerror or exc}"
            ) from None
        self._pin(path, "hide-folder")

    def _missing_file(self, path: Path, entry: ProtectedPath) -> bool:
        """Keep programs from making the missing file ``path``; False when it is there after all, to hide as such.

        A name that is an empty folder may be a placeholder another run holds: it is held again.
        """
        components = _components(path, self.root)
        try:
            if entry.own and path.parent.is_dir() and not os.path.lexists(path):
                OwnFile(path, what=entry.reason).create()  # the audit log: toolsift keeps writing it meanwhile
                return False
            first = components[0]
            if (not os.path.lexists(first) or _empty_folder(first)) and self._placeholders.hold(first):
                self._pin(first, "hide-folder")
                return True
        except OSError as exc:
            raise SandboxUnavailable(
                f"cannot keep programs from creating {str(path)!r} ({entry.reason}): {exc.strerror or exc}"
            ) from None
        if os.path.lexists(path):
            return False  # an empty folder of the user's by that name
        # A folder on the way exists (or a file in its place): nothing new can be made inside a read-only one.
        self._pin([component for component in components if os.path.lexists(component)][-1], "read-only")
        return True

    def _pin(self, path: Path, kind: MountKind) -> None:
        if within(path, self.root) and path != self.root:
            self.mounts += [_Mount(folder, "keep") for folder in _components(path, self.root)[:-1]]
        self.mounts.append(_Mount(path, kind))

    def arguments(self) -> list[str]:
        """bwrap arguments, outermost first; nothing under a hidden or read-only folder is pinned writable."""
        closed = [m.path for m in self.mounts if m.kind in ("hide-folder", "read-only")]
        hidden = [m.path for m in self.mounts if m.kind == "hide-folder"]
        chosen: dict[Path, _Mount] = {}
        for mount in self.mounts:
            if mount.kind in ("keep", "read-only") and any(mount.path != c and within(mount.path, c) for c in closed):
                continue  # already read-only or hidden from above
            if mount.kind.startswith("hide") and any(mount.path != h and within(mount.path, h) for h in hidden):
                continue
            previous = chosen.get(mount.path)
            if previous is None or _PRIORITY[mount.kind] > _PRIORITY[previous.kind]:
                chosen[mount.path] = mount
        args: list[str] = []
        for mount in sorted(chosen.values(), key=lambda m: len(m.path.parts)):
            where = str(mount.path)
            if mount.kind == "keep":
                args += ["--bind", where, where]  # a mount point cannot be renamed or removed
            elif mount.kind == "read-only":
                args += ["--ro-bind", where, where]
            elif mount.kind == "hide-file":
                args += ["--ro-bind", "/dev/null", where]
            else:
                args += ["--tmpfs", where, "--remount-ro", where]
        return args
