"""Reading and editing a JSON config file as several processes, links and permissions expect.

An edit reads, changes and writes the file under an exclusive lock (``flock``
on a ``.NAME.lock`` file beside it, kept there: deleting it would let two
processes lock two different files), so edits made at the same time by
several ``toolsift mcp add`` runs all land. The new text goes to a temporary
file in the same folder, which then replaces the file in one step, so a
reader sees the old file or the new one, never half of one. A link is
followed: the file it points to is the one replaced, and the link stays. The
file keeps its mode (and, where the system allows, its owner); a file its
owner may not write is left alone and the edit refused.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from .._exceptions import ConfigError

__all__ = ["edit_json", "read_json"]


def read_json(path: Path) -> dict[str, Any]:
    """The object at the top of ``path``; an empty one when the file does not exist or is blank.

    Raises:
        ConfigError: When the file is not plain JSON or not an object, naming the file and the line.
    """
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"not plain JSON ({exc.msg}); toolsift edits plain JSON only, and would drop comments: "
            "edit it by hand, it was left as it is",
            path=path,
            line=exc.lineno,
        ) from None
    if not isinstance(data, dict):
        raise ConfigError("expected a JSON object at the top; it was left as it is", path=path)
    return data


@contextmanager
def edit_json(path: Path) -> Iterator[dict[str, Any]]:
    """Lock ``path``, give its object to change in place, then write it back; nothing is written on an error.

    A link is written through: ``path`` may be a link to the real file. The
    lock is held from the read to the write, so concurrent edits serialise.

    Raises:
        ConfigError: When the file may not be written, its folder cannot be
            written in, or it is not a JSON object.
    """
    target = Path(os.path.realpath(path))
    named = str(path) if target == path.absolute() else f"{path} (a link to {target})"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with _locked(target):
            before = _writable(target, named)
            data = read_json(target)
            yield data
            _replace(target, json.dumps(data, indent=2, ensure_ascii=False) + "\n", before)
    except PermissionError as exc:
        raise ConfigError(
            f"permission denied on {exc.filename}: an edit reads the file and writes in its folder "
            "(a lock file, and the new file that replaces it); it was left as it is",
            path=path,
        ) from None


@contextmanager
def _locked(target: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``target``'s lock file, waiting for any other holder."""
    lock = target.parent / f".{target.name}.lock"
    try:
        # Not through a link: one planted in the project would have the lock create a file where it points.
        descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise ConfigError(
            f"the lock file {lock} is a symbolic link; toolsift does not write through links a program could "
            "have planted; remove it",
            path=target,
        ) from None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)  # released when the descriptor closes
        yield
    finally:
        os.close(descriptor)


def _writable(target: Path, named: str) -> os.stat_result | None:
    """``target``'s status, or None when it does not exist yet.

    Raises:
        ConfigError: When its owner may not write it (``chmod u-w``): a read-only config is meant to stay as it is.
    """
    try:
        status = target.stat()
    except FileNotFoundError:
        return None
    if not status.st_mode & stat.S_IWUSR:
        mode = stat.S_IMODE(status.st_mode)
        raise ConfigError(
            f"{named} is read-only (mode {mode:04o}); it was left as it is. Make it writable "
            "(chmod u+w) to edit it, or edit another file with -c"
        )
    return status


def _replace(target: Path, text: str, before: os.stat_result | None) -> None:
    """Write ``text`` to a new file beside ``target`` with ``target``'s mode and owner, then put it in its place."""
    temporary = target.parent / f".{target.name}.{secrets.token_hex(4)}.tmp"
    # A new file gets the umask's mode, as an editor would give it; an existing one keeps its own.
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            if before is not None:
                os.fchmod(file.fileno(), stat.S_IMODE(before.st_mode))
                if (before.st_uid, before.st_gid) != (os.geteuid(), os.getegid()):
                    with suppress(PermissionError):  # only root may give a file away; others keep it theirs
                        os.fchown(file.fileno(), before.st_uid, before.st_gid)
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
