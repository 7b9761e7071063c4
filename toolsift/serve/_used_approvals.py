"""Where a server records the approvals it has acted on, so that one yes runs one call.

A 2026-07-28 client answers an approval question on its retry, echoing the
sealed ``requestState`` that names a nonce. Every process that holds the
sealing key (``$TOOLSIFT_REQUEST_STATE_KEY``) accepts that state, so the
record of used nonces must reach as far as the key does:

- one process with a key of its own: :class:`ProcessApprovals`, in memory;
- the workers of one ``--workers N`` run, or servers of one machine given
  ``serve.approvalFolder``: :class:`FolderApprovals`, one file per nonce,
  created with ``O_CREAT | O_EXCL`` so that only one process creates it;
- replicas sharing ``serve.shared``: :class:`RedisApprovals`, ``SET NX PX``
  in the Redis they already share.

A key set in the environment with neither of the shared stores may be held by
servers this one cannot see: :class:`UnkeptApprovals` says so, and approvals
of the 2026-07-28 era are refused rather than kept in one process only.

A record lives as long as the state it guards (``seconds``): the state
expires by then, and no retry can bring the nonce back.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from .._exceptions import ConfigError
from .._files import OwnFile
from ..config._internal import ServeSettings
from ._replicas._redis import RedisClient
from ._state_key import ENV_STATE_KEY

__all__ = [
    "FolderApprovals",
    "ProcessApprovals",
    "RedisApprovals",
    "UnkeptApprovals",
    "UsedApprovals",
    "used_approvals",
    "workers_folder",
]

logger = logging.getLogger("toolsift.serve")

# Expired records are swept at most this often per process, as a share of their lifetime.
_SWEEP_SHARE = 0.1


def _digest(nonce: str) -> str:
    """A fixed-length name for a nonce (a file name, a key), whatever characters it holds."""
    return hashlib.sha256(nonce.encode("utf-8", "surrogatepass")).hexdigest()


class UsedApprovals(Protocol):
    """The record of approval nonces already acted on."""

    @property
    def unkept(self) -> str | None:
        """Why approvals cannot be kept single-use here (they are refused then), or None."""
        ...

    async def first_use(self, nonce: str, *, seconds: float) -> bool:
        """Record ``nonce`` as used for ``seconds``; whether no one had recorded it before."""
        ...


class ProcessApprovals:
    """Nonces used in this process: enough when no other process accepts its states."""

    unkept = None

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._used: dict[str, float] = {}  # nonce -> when its record expires

    async def first_use(self, nonce: str, *, seconds: float) -> bool:
        now = self._clock()
        self._used = {used: until for used, until in self._used.items() if until > now}
        if nonce in self._used:
            return False
        self._used[nonce] = now + seconds
        return True


class FolderApprovals:
    """Nonces used by every process that records them in ``folder``: one empty file each.

    The folder is created (0700) when missing; it must belong to this user and
    be writable by no one else, since whoever can delete a record can make a
    used approval count again.

    Args:
        folder: The shared folder.
        clock: Wall-clock time (file times are compared with it).

    Raises:
        ConfigError: When the folder cannot be made, is not a folder, or others may write in it.
    """

    unkept = None

    def __init__(self, folder: Path, clock: Callable[[], float] = time.time) -> None:
        self.folder = _private_folder(folder)
        self._clock = clock
        self._swept = float("-inf")  # the first use sweeps what earlier runs left

    def __repr__(self) -> str:
        return f"FolderApprovals({str(self.folder)!r})"

    async def first_use(self, nonce: str, *, seconds: float) -> bool:
        now = self._clock()
        if now - self._swept >= seconds * _SWEEP_SHARE:
            self._swept = now
            self._sweep(now - seconds)
        try:
            self._record(_digest(nonce)).create_new(b"", mode=0o600)
        except FileExistsError:
            return False
        return True

    def _record(self, name: str) -> OwnFile:
        return OwnFile(self.folder / name, what="used approval record")

    def _sweep(self, before: float) -> None:
        """Remove the records written before ``before``: their states have expired."""
        try:
            entries = list(os.scandir(self.folder))
        except OSError as exc:
            logger.warning("cannot list the used approvals in %s to remove expired ones: %s", self.folder, exc)
            return
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_mtime < before:
                    self._record(entry.name).remove()
            except OSError:
                continue  # another process swept it first, or it is not ours to remove


def _private_folder(folder: Path) -> Path:
    """``folder``'s real path, made (0700) if missing, once it is known to be a folder only this user writes."""
    where = "serve.approvalFolder"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        real = Path(os.path.realpath(folder))
        info = os.stat(real)
    except OSError as exc:
        raise ConfigError(f"cannot use {folder} for used approvals: {exc}", field=where) from None
    if not stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"{folder} is not a folder", field=where)
    if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ConfigError(
            f"{folder} must belong to this user and be writable by no one else (chmod 700): whoever can "
            "remove a record there can make a used approval count again",
            field=where,
        )
    return real


class RedisApprovals:
    """Nonces used by every replica sharing one Redis: ``SET <prefix>:approval:<digest> 1 NX PX <ttl>``."""

    unkept = None

    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis

    async def first_use(self, nonce: str, *, seconds: float) -> bool:
        won, _ = await self._redis.claim(self._redis.key("approval", _digest(nonce)), "1", seconds=seconds)
        return won


class UnkeptApprovals:
    """No store reaches every process that accepts this server's states: approvals are refused.

    Args:
        unkept: Why, and the settings that fix it (the client sees it with the refusal).
    """

    def __init__(self, unkept: str) -> None:
        self.unkept = unkept

    async def first_use(self, nonce: str, *, seconds: float) -> bool:
        raise RuntimeError(self.unkept)


def used_approvals(
    settings: ServeSettings, redis: RedisClient | None, environ: Mapping[str, str] | None = None
) -> UsedApprovals:
    """The record that reaches every process accepting this server's ``requestState``.

    Args:
        settings: The ``serve`` section (``approvalFolder``).
        redis: The replicas' Redis, when ``serve.shared`` is set.
        environ: Where ``$TOOLSIFT_REQUEST_STATE_KEY`` is looked up; default: ``os.environ``.

    Raises:
        ConfigError: When ``serve.approvalFolder`` cannot be used.
    """
    if redis is not None:
        return RedisApprovals(redis)
    if settings.approval_folder is not None:
        return FolderApprovals(settings.approval_folder)
    if (os.environ if environ is None else environ).get(ENV_STATE_KEY):
        return UnkeptApprovals(
            f"approvals cannot be kept single-use: ${ENV_STATE_KEY} is set, so other servers holding that key "
            "accept this server's approval answers, and no store they share records which answers were used. "
            "Set serve.shared (replicas' Redis) or serve.approvalFolder (a folder every such server on this "
            "machine uses); until then calls that need approval from a 2026-07-28 client are refused"
        )
    return ProcessApprovals()


@contextmanager
def workers_folder() -> Iterator[Path]:
    """A private folder for the used approvals of one ``--workers N`` run, removed when the run ends."""
    folder = Path(tempfile.mkdtemp(prefix="toolsift-approvals-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
