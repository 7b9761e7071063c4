"""Placeholders: empty folders that hold the name of a missing protected file while programs run.

A program may create any name in the workspace. The sandbox hides an existing
protected path behind a read-only mount and makes the folder of a missing one
read-only, but the workspace itself must stay writable: a missing env file,
``.mcp.json`` or ``.vscode/`` (of ``.vscode/mcp.json``) directly in it could be
created by a program and read by toolsift at its next start. Such a name gets
a placeholder: toolsift makes an empty folder there, the sandbox mounts an
empty read-only folder over it, and it is removed once the sandbox is gone,
so the file is missing again, as before the run. A folder rather than a file:
toolsift's config lookup takes only files, git lists no empty folder, and a
reader that meets it mid-run gets an error, not an empty file to load.

Runs overlap (calls at once, ``--workers`` processes, servers sharing a
workspace), so each placeholder is held with a shared ``flock`` on a lock file
of its own in toolsift's user folder (out of every sandbox's reach), which also
names the inode of the folder toolsift made. The last holder (the one that
gets the lock exclusively) removes it, only while it is that same empty
folder. A run that finds a placeholder another run made holds it too; one left
by a process killed mid-run is removed after the next run.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import stat
from pathlib import Path
from typing import final

__all__ = ["Placeholders"]

_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


def _marker(info: os.stat_result) -> bytes:
    return f"{info.st_dev}:{info.st_ino}".encode()


@final
class Placeholders:
    """The placeholders one command holds, from its plan until its sandbox is gone.

    Args:
        locks: The folder of the lock files (made, 0700, when first needed).
    """

    def __init__(self, locks: Path) -> None:
        self._locks = locks
        self._held: list[tuple[Path, int]] = []

    def hold(self, path: Path) -> bool:
        """Make an empty folder at the missing ``path``, or join a placeholder there; False when ``path`` is not one.

        Raises:
            OSError: The lock file or the folder cannot be made.
        """
        self._locks.mkdir(mode=0o700, parents=True, exist_ok=True)
        name = hashlib.sha256(os.fsencode(path)).hexdigest()[:32]
        lock = os.open(self._locks / f"{name}.lock", _LOCK_FLAGS, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_SH)  # before looking: no holder can remove it from here on
            try:
                os.mkdir(path, 0o700)
                made = True
            except FileExistsError:
                made = False
            info = os.lstat(path)
            if made:
                os.ftruncate(lock, 0)
                os.pwrite(lock, _marker(info), 0)
            elif not stat.S_ISDIR(info.st_mode) or os.pread(lock, 64, 0) != _marker(info):
                os.close(lock)
                return False  # the user's own file or folder
        except BaseException:
            os.close(lock)
            raise
        self._held.append((path, lock))
        return True

    def release(self) -> None:
        """Let go of every placeholder; remove those no other run holds. Call once the sandbox is gone."""
        held, self._held = self._held, []
        for path, lock in held:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                info = os.lstat(path)
                if os.pread(lock, 64, 0) == _marker(info):
                    os.rmdir(path)  # only while empty
                    os.ftruncate(lock, 0)
            except OSError:
                pass  # held by another run (it removes it), gone already, or not empty: left as it is
            finally:
                os.close(lock)
