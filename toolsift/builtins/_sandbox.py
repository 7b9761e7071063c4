"""The sandbox ``exec_shell`` runs programs in: bubblewrap (``bwrap``), as Claude Code uses on Linux.

An allowed program is not a safe program: ``git`` runs hooks and
``core.fsmonitor``, ``find -exec``, ``tar --to-command``, ``sed``'s ``e`` and
``awk``'s ``system()`` run anything. Rather than read each program's
arguments, every program runs where anything it starts is confined too:

- the system (``/usr`` and its links, a few files of ``/etc``) read-only, a
  fresh ``/tmp``, a private ``/proc`` and a minimal ``/dev``; nothing else of
  the machine (home folders, ``/root``, ``/var``, ``/run``) is there;
- the workspace the only writable folder, with its protected paths (what
  configures toolsift) hidden behind empty read-only mounts, the folders
  that hold them pinned by mounts of their own, so they cannot be renamed away,
  and the missing ones kept from being made (``_sandbox_plan``);
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
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import final

import anyio

from .._folders import user_folder
from ._protected import within
from ._sandbox_plan import ETC, SYSTEM, Plan, SandboxUnavailable, mounted_system
from ._workspace import Workspace

__all__ = ["SANDBOX_PATH", "Sandbox", "SandboxUnavailable"]

#: ``PATH`` inside the sandbox; bare program names are looked up there.
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
# Variables passed in when set; the rest of the server's environment (credentials) stays out.
_PASSED_VARIABLES = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM")
_PROBE_SECONDS = 30.0


@final
class Sandbox:
    """Builds and checks the bubblewrap command line for programs run in one workspace.

    Args:
        workspace: The folder programs run in, the only writable one; its
            protected paths are hidden from them.
        network: Share the server's network; by default programs have none.
        bwrap: The bubblewrap program; default: ``bwrap`` found on ``PATH``.
        placeholder_locks: Where the placeholders' lock files go (see ``_placeholders``); default:
            ``placeholders`` in toolsift's user folder, which no sandbox shows.
    """

    def __init__(
        self,
        workspace: Workspace,
        *,
        network: bool = False,
        bwrap: str | os.PathLike[str] | None = None,
        placeholder_locks: Path | None = None,
    ) -> None:
        self._workspace = workspace
        self._network = network
        self._bwrap = None if bwrap is None else os.fspath(bwrap)
        self._locks = placeholder_locks
        self._works: str | None = None  # the bwrap that passed the probe

    def program(self, name: str) -> str | None:
        """Where the sandbox finds program ``name`` (a bare name or an absolute path), or None."""
        if os.path.isabs(name):
            system = mounted_system()
            inside = any(within(Path(os.path.realpath(name)), root) for root in system)
            return name if inside and os.access(name, os.X_OK) else None
        return shutil.which(name, path=SANDBOX_PATH)

    @asynccontextmanager
    async def command(self, argv: Sequence[str], *, info_fd: int | None = None) -> AsyncIterator[list[str]]:
        """The command line that runs ``argv`` sandboxed, in the workspace, for the time of the block.

        Missing protected folders inside the workspace are created (empty), so
        that they can be hidden, and missing protected files that a program
        could create get placeholders, removed on exit: leave the block once the
        sandbox is gone. If cancelled, nothing has run. With ``info_fd``, bwrap
        writes the sandbox's host PID there as JSON (``child-pid``) and closes it.

        Raises:
            SandboxUnavailable: When bubblewrap is missing or cannot make a
                sandbox here, or a protected path cannot be hidden.
        """
        bwrap = await self._checked_bwrap()
        root = self._workspace.root
        if any(within(Path(os.path.realpath(path)), root) for path in SYSTEM if os.path.exists(path)):
            raise SandboxUnavailable(
                f"the workspace {str(root)!r} holds system folders (/usr), which programs "
                "would then be able to change; choose a project folder as the workspace"
            )
        from ._placeholders import Placeholders  # flock: POSIX only, where bubblewrap is; toolsift imports anywhere

        placeholders = Placeholders(self._locks or user_folder() / "placeholders")
        try:
            plan = Plan(root, placeholders)
            for entry in self._workspace.protected:
                plan.add(entry)
            yield self._line(bwrap, plan, argv, info_fd)
        finally:
            placeholders.release()

    def _line(self, bwrap: str, plan: Plan, argv: Sequence[str], info_fd: int | None) -> list[str]:
        root = self._workspace.root
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
        for path in SYSTEM:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            else:
                args += ["--ro-bind-try", path, path]
        for name in ETC:
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
