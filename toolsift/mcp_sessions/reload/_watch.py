"""Following one config file with watchfiles, and reading it for a reload.

Folders are watched, not the file: editors save by writing a temporary file
and renaming it over the old one, which replaces the file's inode, and a watch
on the old inode would never fire again. Events for other files in those
folders are filtered out before they wake anything.

A symlinked file (dotfile managers keep ``toolsift.json`` in a repository and
link it into place) is watched at every step of its chain of links: the
folder of the link, so that re-pointing the link is an edit, and the folder of
each target, so that editing the real file is one. When a link in the chain
changes, the chain is resolved again and the watch moves to the new targets.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import anyio.lowlevel
import anyio.to_thread
from anyio.abc import TaskStatus
from watchfiles import Change, awatch

from ..._exceptions import ConfigError
from ...config import validate_config
from ...config._internal import ConfigReport

__all__ = ["DEFAULT_DEBOUNCE_MS", "link_chain", "read_config", "watch_file"]

logger = logging.getLogger("toolsift.mcp_sessions")

# A save is one burst of events; watchfiles yields a burst once no event came for
# its `step` (50 ms), and never holds one longer than the debounce.
DEFAULT_DEBOUNCE_MS = 300
_STEP_MS = 50
# As the kernel does (ELOOP): a longer chain of links is a loop.
_MAX_LINKS = 40


async def read_config(path: Path) -> ConfigReport:
    """Check ``path`` as a reload would apply it, in a worker thread (it reads files).

    References (``${VAR}``, ``secret://``) are resolved too, so an edit that
    could never start its server is rejected while the running one still works.
    A file that cannot be read gives a report with that one problem.
    """
    try:
        return await anyio.to_thread.run_sync(functools.partial(validate_config, path, resolve_references=True))
    except ConfigError as exc:
        return ConfigReport(None, (exc,), path=path)


def link_chain(path: Path) -> tuple[Path, ...]:
    """``path``, then each file its chain of symlinks points to, as real paths of their folders.

    A plain file gives itself alone; a dangling or looping chain ends where
    it cannot be followed further.
    """
    current = _real_folder(path.absolute())
    chain = [current]
    for _ in range(_MAX_LINKS):
        try:
            target = os.readlink(current)
        except OSError:  # not a link (or gone): the chain ends here
            break
        current = _real_folder(current.parent / target)
        if current in chain:
            break
        chain.append(current)
    return tuple(chain)


def _real_folder(path: Path) -> Path:
    # The folder's real path, so that a symlinked folder and an event's path compare equal.
    return Path(os.path.realpath(path.parent)) / path.name


async def watch_file(
    path: Path,
    on_change: Callable[[], Awaitable[object]],
    *,
    debounce_ms: int,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Call ``on_change()`` after each burst of changes to ``path`` (or a link target of it), until cancelled.

    ``on_change`` also runs once when the watch is in place (before
    ``task_status.started()``), for edits made before the watch existed, and
    again whenever the watch moves to a link's new target. An exception it
    raises is logged and the watch goes on. On cancellation the watch thread
    is told to stop and this returns within one step (50 ms).

    Raises:
        ConfigError: The file's folder does not exist.
    """
    target = path.absolute()
    if not target.parent.is_dir():
        raise ConfigError("cannot watch the config file: its folder does not exist", path=target)
    started = False
    async with anyio.create_task_group() as group:
        while True:
            chain = link_chain(target)
            moved, stop = anyio.Event(), anyio.Event()
            group.start_soon(_follow, chain, on_change, target, debounce_ms, stop, moved)
            # awatch installs its watch synchronously in its first step, before its first
            # await; _follow was scheduled before this task resumes, so after one
            # checkpoint the watch exists and no later edit can be missed.
            await anyio.lowlevel.checkpoint()
            await _call(on_change, target)
            if not started:
                task_status.started()
                started = True
            try:
                await moved.wait()
            finally:
                # The watch thread only looks at this event; without it, cancelling would
                # wait for the thread's next timeout.
                stop.set()


async def _follow(
    chain: tuple[Path, ...],
    on_change: Callable[[], Awaitable[object]],
    target: Path,
    debounce_ms: int,
    stop: anyio.Event,
    moved: anyio.Event,
) -> None:
    """Reload after each burst of changes to a file of ``chain``; set ``moved`` when the chain itself changed."""
    watched = set(chain)

    def in_chain(change: Change, changed: str) -> bool:
        return _real_folder(Path(changed)) in watched

    folders = sorted({str(file.parent) for file in chain if file.parent.is_dir()})
    changes = awatch(
        *folders, watch_filter=in_chain, debounce=debounce_ms, step=_STEP_MS, stop_event=stop, recursive=False
    )
    async with contextlib.aclosing(changes):
        async for _ in changes:
            if link_chain(target) != chain:
                moved.set()  # the watch moves first; its own first check then reloads the new target
                return
            await _call(on_change, target)


async def _call(on_change: Callable[[], Awaitable[object]], target: Path) -> None:
    try:
        await on_change()
    except Exception:
        # A reload reports bad files itself; anything else must not end the watch, nor go unseen.
        logger.exception("Reloading the config file %s failed", target)
