"""Writing the files toolsift keeps, so that no link or second name a program planted can redirect a write.

A sandboxed program may write in the workspace, and some of toolsift's files
can lie there (the audit log beside its config). A program that makes
``audit.jsonl`` a symbolic link to ``~/.bashrc``, or a hard link to a
server's ``server.py``, would have toolsift append model-chosen text there.
So every file toolsift writes goes through :class:`OwnFile`:

- its folder is fixed by its real path when the file is set up (links the
  user made are followed then, once), and every write walks that real path
  again one folder at a time without following links, so a folder swapped
  for a link since is refused;
- the file itself is opened without following a link (``O_NOFOLLOW``),
  must be a regular file, and, written in place, must have no other name
  (``st_nlink == 1``);
- a whole-file write goes to a new private (0600) file beside it that
  replaces it in one step (a crash mid-write loses nothing; a link in its
  place is replaced, never followed).

What is refused raises :class:`UnsafeFile`, naming the file and why. A shared
root module: the audit log, the user folder's stores (trusted projects,
pinned tools, skill grants, sign-in tokens), the search caches and the CLI
all write through it.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path
from typing import final

from ._exceptions import ToolsiftError

__all__ = ["OwnFile", "UnsafeFile", "write_atomically"]

# O_PATH needs no read permission on the folders walked (a home folder may be 0711).
_FOLDER_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a named pipe planted in the file's place fails at once rather than hanging the writer.
_FILE_FLAGS = os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_FIX = "toolsift does not write through links a program could have planted; remove it"


class UnsafeFile(ToolsiftError, OSError):
    """Raised when toolsift will not write one of its files: a link or another name could redirect the write.

    Also an ``OSError``, so that a caller that handles a file it cannot write handles this one too.

    Attributes:
        path: The file toolsift meant to write.
        problem: What is wrong with it ("is a symbolic link").
    """

    def __init__(self, what: str, path: Path, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{what} {path} {problem}; {_FIX}")


@final
class OwnFile:
    """One file toolsift writes, its folder fixed (by real path) when it is set up.

    Args:
        path: The file; made absolute against the current folder now.
        what: What it is, for messages ("audit log", "trusted projects store").
    """

    def __init__(self, path: str | os.PathLike[str], *, what: str) -> None:
        self.path = Path(os.path.abspath(path))
        self.what = what
        self._folder = Path(os.path.realpath(self.path.parent))

    def __repr__(self) -> str:
        return f"OwnFile({str(self.path)!r}, what={self.what!r})"

    def create(self, *, mode: int = 0o600) -> None:
        """Create the file empty unless it exists; an existing one is checked as :meth:`append` checks it.

        Raises:
            UnsafeFile: It is a link, not a regular file, has other names, or its folder became a link.
            OSError: The folder is missing or cannot be written.
        """
        os.close(self._opened(os.O_CREAT, mode))

    def create_new(self, data: str | bytes, *, mode: int = 0o666) -> None:
        """Write ``data`` to a file that must not exist yet (``mode`` less the umask).

        Raises:
            FileExistsError: Something (a file, a link) has the name already.
            UnsafeFile: Its folder became a link.
        """
        self._write(self._opened(os.O_CREAT | os.O_EXCL, mode), data)

    def append(self, text: str) -> None:
        """Append ``text`` (UTF-8) to the file, creating it (0600) when it is missing.

        Raises:
            UnsafeFile: It is a link, not a regular file, has other names, or its folder became a link.
            OSError: It cannot be written.
        """
        self._write(self._opened(os.O_CREAT | os.O_APPEND, 0o600), text)

    def replace(self, data: str | bytes) -> None:
        """Write the whole file anew: a private (0600) file beside it, then swapped in.

        Raises:
            UnsafeFile: Its folder became a link.
            OSError: The folder cannot be written; the file is then as it was.
        """
        folder = self._open_folder()
        temporary = f".{self.path.name}-{secrets.token_hex(8)}"
        try:
            self._write(os.open(temporary, _FILE_FLAGS | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=folder), data)
            try:
                os.replace(temporary, self.path.name, src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                os.unlink(temporary, dir_fd=folder)
                raise
        finally:
            os.close(folder)

    def remove(self) -> None:
        """Remove the file if it is there; a link in its place is removed, never followed.

        Raises:
            UnsafeFile: Its folder became a link.
            OSError: The folder cannot be written.
        """
        folder = self._open_folder()
        try:
            os.unlink(self.path.name, dir_fd=folder)
        except FileNotFoundError:
            pass
        finally:
            os.close(folder)

    def _refused(self, problem: str) -> UnsafeFile:
        return UnsafeFile(self.what, self.path, problem)

    def _open_folder(self) -> int:
        """The folder, walked down its real path from ``/`` without following a link."""
        fd = os.open("/", _FOLDER_FLAGS)
        walked = Path("/")
        try:
            for part in self._folder.parts[1:]:
                walked /= part
                try:
                    inner = os.open(part, _FOLDER_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ENOTDIR, errno.ELOOP) and os.path.islink(walked):
                        raise self._refused(
                            f"lies in {walked}, which has become a symbolic link since toolsift first wrote there"
                        ) from None
                    raise
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _opened(self, flags: int, mode: int) -> int:
        """The file opened for writing with ``flags``, once it is known to be a regular file with one name."""
        folder = self._open_folder()
        try:
            fd = os.open(self.path.name, _FILE_FLAGS | flags, mode, dir_fd=folder)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise self._refused("is a symbolic link") from None
            if exc.errno == errno.ENXIO:  # a named pipe nobody reads
                raise self._refused("is not a regular file") from None
            raise
        finally:
            os.close(folder)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            os.close(fd)
            if not stat.S_ISREG(info.st_mode):
                raise self._refused("is not a regular file")
            raise self._refused(f"has {info.st_nlink} hard links (other names for the same file)")
        return fd

    @staticmethod
    def _write(fd: int, data: str | bytes) -> None:
        """Write all of ``data`` and close ``fd``; unbuffered, so that an appended line is one write."""
        view = memoryview(data.encode("utf-8") if isinstance(data, str) else data)
        try:
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)


def write_atomically(path: Path, data: str | bytes, *, what: str) -> None:
    """Write ``data`` to ``path`` through a private (0600) file beside it, swapped in whole (see :class:`OwnFile`).

    Links in the path's folders are followed as they are now; the name itself is
    replaced, never followed, and a folder swapped for a link mid-write is refused.

    Raises:
        UnsafeFile: A folder on the way became a link while writing.
        OSError: When the folder or the file cannot be written; ``path`` is then as it was.
    """
    OwnFile(path, what=what).replace(data)
