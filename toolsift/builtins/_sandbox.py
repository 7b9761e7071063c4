"""The sandbox ``exec_shell`` runs programs in: bubblewrap (``bwrap``), as Claude Code uses on Linux.

An allowed program is not a safe program: ``git`` runs hooks and
``core.fsmonitor``, ``find -exec``, ``tar --to-command``, ``sed``'s ``e`` and
``awk``'s ``system()`` run anything. Rather than read each program's
arguments, every program runs where anything it starts is confined too:

- the system (``/usr`` and its links, a few files of ``/etc``) read-only, a
  fresh ``/tmp``, a private ``/proc`` and a minimal ``/dev``; nothing else of
  the machine (home folders, ``/root``, ``/var``, ``/run``) is there;
- the workspace the only writable folder, with its protected paths (what
  configures toolsift) hidden behind empty read-only mounts, and the folders
  that hold them pinned by mounts of their own, so they cannot be renamed away;
- no network (a network namespace of its own) unless the policy allows it;
- new PID, IPC, UTS and cgroup namespaces, no capabilities, a session of its
  own (no terminal to push input into), and death with its parent: killing
  ``bwrap`` kills everything inside.

Where bubblewrap is missing or cannot make namespaces, commands are refused
with the reason, never run without the sandbox.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, final

import anyio

from ._protected import ProtectedPath
from ._workspace import Workspace

__all__ = ["SANDBOX_PATH", "Sandbox", "SandboxUnavailable"]

#: ``PATH`` inside the sandbox; bare program names are looked up there.
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
# The system, read-only. Merged-/usr systems have links here, which the sandbox copies as links.
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What programs need of /etc (libraries, users, names, time, certificates, alternatives such as awk);
# not the rest (/etc/shadow, SSH host keys, other programs' credentials).
_ETC = (
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
# Variables passed in when set; the rest of the server's environment (credentials) stays out.
_PASSED_VARIABLES = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM")
_PROBE_SECONDS = 30.0
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


def _mounted_system() -> list[Path]:
    """The host paths the sandbox shows (besides the workspace), for finding protected paths among them."""
    return [Path(os.path.realpath(path)) for path in _SYSTEM if os.path.exists(path)] + [
        Path("/etc") / name for name in _ETC
    ]


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _first_link(path: Path, root: Path) -> Path | None:
    """The first component of ``path`` below ``root`` that is a symbolic link, or None."""
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def _between(root: Path, path: Path) -> list[Path]:
    """The folders strictly between ``root`` and ``path``, outermost first."""
    return [parent for parent in reversed(path.parents) if root in parent.parents]


class _Plan:
    """The mounts that hide the protected paths from one command."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.mounts: list[_Mount] = []

    def add(self, entry: ProtectedPath) -> None:
        lexical = entry.path
        real = Path(os.path.realpath(lexical))
        root = self.root
        if _within(root, real) and entry.folder:
            raise SandboxUnavailable(
                f"the workspace {str(root)!r} lies inside {str(lexical)!r} ({entry.reason}), "
                "which programs must not reach"
            )
        if _within(lexical, root):
            link = _first_link(lexical, root)
            if link is not None:
                # The link itself could be replaced: its folder is made read-only, unless that is the workspace.
                if link.parent == root:
                    what = "is" if link == lexical else f"goes through {str(link)!r}, which is"
                    raise SandboxUnavailable(
                        f"{str(lexical)!r} ({entry.reason}) {what} a symbolic link in the workspace, which a program "
                        "could replace; nothing runs until it is a plain file or folder, or lies outside the "
                        "workspace"
                    )
                self._pin(link.parent, "read-only")
            elif not os.path.lexists(lexical):
                self._missing(lexical, entry)
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
        if _within(real, root) or any(_within(real, shown) for shown in _mounted_system()):
            self._pin(real, "hide-folder" if real.is_dir() else "hide-file")

    def _missing(self, path: Path, entry: ProtectedPath) -> None:
        if entry.folder:
            # Made (empty) so that it can be hidden: a skills folder a program created would load at once.
            try:
                path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise SandboxUnavailable(
                    f"cannot create {str(path)!r} ({entry.reason}) to hide it from programs: {exc.strerror or exc}"
                ) from None
            self._pin(path, "hide-folder")
            return
        existing = next((folder for folder in path.parents if folder.is_dir()), self.root)
        if existing != self.root:
            self._pin(existing, "read-only")
        # A missing file directly in the workspace cannot be kept from being created (see docs/security.md).

    def _pin(self, path: Path, kind: MountKind) -> None:
        if _within(path, self.root) and path != self.root:
            self.mounts += [_Mount(folder, "keep") for folder in _between(self.root, path)]
        self.mounts.append(_Mount(path, kind))

    def arguments(self) -> list[str]:
        """bwrap arguments, outermost first; nothing under a hidden or read-only folder is pinned writable."""
        closed = [m.path for m in self.mounts if m.kind in ("hide-folder", "read-only")]
        hidden = [m.path for m in self.mounts if m.kind == "hide-folder"]
        chosen: dict[Path, _Mount] = {}
        for mount in self.mounts:
            if mount.kind in ("keep", "read-only") and any(mount.path != c and _within(mount.path, c) for c in closed):
                continue  # already read-only or hidden from above
            if mount.kind.startswith("hide") and any(mount.path != h and _within(mount.path, h) for h in hidden):
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


@final
class Sandbox:
    """Builds and checks the bubblewrap command line for programs run in one workspace.

    Args:
        workspace: The folder programs run in, the only writable one; its
            protected paths are hidden from them.
        network: Share the server's network; by default programs have none.
        bwrap: The bubblewrap program; default: ``bwrap`` found on ``PATH``.
    """

    def __init__(
        self, workspace: Workspace, *, network: bool = False, bwrap: str | os.PathLike[str] | None = None
    ) -> None:
        self._workspace = workspace
        self._network = network
        self._bwrap = None if bwrap is None else os.fspath(bwrap)
        self._works: str | None = None  # the bwrap that passed the probe

    def program(self, name: str) -> str | None:
        """Where the sandbox finds program ``name`` (a bare name or an absolute path), or None."""
        if os.path.isabs(name):
            system = _mounted_system()
            inside = any(_within(Path(os.path.realpath(name)), root) for root in system)
            return name if inside and os.access(name, os.X_OK) else None
        return shutil.which(name, path=SANDBOX_PATH)

    async def command(self, argv: Sequence[str], *, info_fd: int | None = None) -> list[str]:
        """The command line that runs ``argv`` sandboxed, in the workspace.

        Missing protected folders inside the workspace are created (empty), so
        that they can be hidden. If cancelled, nothing has run. With ``info_fd``,
        bwrap writes the sandbox's host PID there as JSON (``child-pid``) and closes it.

        Raises:
            SandboxUnavailable: When bubblewrap is missing or cannot make a
                sandbox here, or a protected path cannot be hidden.
        """
        bwrap = await self._checked_bwrap()
        root = self._workspace.root
        if any(_within(Path(os.path.realpath(path)), root) for path in _SYSTEM if os.path.exists(path)):
            raise SandboxUnavailable(
                f"the workspace {str(root)!r} holds system folders (/usr), which programs "
                "would then be able to change; choose a project folder as the workspace"
            )
        plan = _Plan(root)
        for entry in self._workspace.protected:
            plan.add(entry)
        return [
            bwrap,
            *(["--info-fd", str(info_fd)] if info_fd is not None else []),
            *self._system(),
            "--bind",
            str(root),
            str(root),
            *plan.arguments(),
            "--remount-ro",
            "/",
            "--chdir",
            str(root),
            *self._environment(),
            "--",
            *argv,
        ]

    def _system(self) -> list[str]:
        args = ["--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"]
        if self._network:
            args.append("--share-net")
        for path in _SYSTEM:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            else:
                args += ["--ro-bind-try", path, path]
        for name in _ETC:
            args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        return [*args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]

    @staticmethod
    def _environment() -> list[str]:
        args = [
            "--clearenv",
            "--setenv",
            "PATH",
            SANDBOX_PATH,
            "--setenv",
            "HOME",
            "/tmp",
            "--setenv",
            "TMPDIR",
            "/tmp",
        ]
        for name in _PASSED_VARIABLES:
            if name in os.environ:
                args += ["--setenv", name, os.environ[name]]
        return args

    def _located_bwrap(self) -> str:
        if self._bwrap is not None:
            if not os.access(self._bwrap, os.X_OK):
                raise SandboxUnavailable(
                    f"bubblewrap was not found at {self._bwrap!r}; programs run only inside its sandbox"
                )
            return self._bwrap
        # Relative PATH entries would resolve against the server's folder.
        path = os.pathsep.join(
            entry for entry in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(entry)
        )
        found = shutil.which("bwrap", path=path)
        if found is None:
            raise SandboxUnavailable(
                "bubblewrap (bwrap) is not installed, and programs run only inside its "
                "sandbox; install it (Debian and Ubuntu: apt-get install bubblewrap)"
            )
        return found

    async def _checked_bwrap(self) -> str:
        """bwrap, once it has shown that it can make this sandbox's namespaces here."""
        bwrap = self._located_bwrap()
        if self._works == bwrap:
            return bwrap
        true = shutil.which("true", path=SANDBOX_PATH) or "/bin/true"
        probe = [bwrap, *self._system(), "--", true]
        try:
            with anyio.fail_after(_PROBE_SECONDS):
                done = await anyio.run_process(probe, check=False, stdin=subprocess.DEVNULL)
        except (OSError, TimeoutError) as exc:
            raise SandboxUnavailable(f"bubblewrap ({bwrap!r}) cannot run: {exc}") from None
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", errors="replace").strip() or "nothing"
            raise SandboxUnavailable(
                f"bubblewrap ({bwrap!r}) cannot make a sandbox here: it exited with code "
                f"{done.returncode} and said {said!r}"
            )
        self._works = bwrap
        return bwrap
