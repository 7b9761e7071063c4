"""Following one config file with watchfiles, and reading it for a reload.

The folder is watched, not the file: editors save by writing a temporary file
and renaming it over the old one, which replaces the file's inode, and a watch
on the old inode would never fire again. Events for other files in the folder
are filtered out before they wake anything.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import anyio
import anyio.lowlevel
import anyio.to_thread
from anyio.abc import TaskStatus
from watchfiles import Change, awatch

from .._exceptions import ConfigError
from ._loading import ConfigReport, validate_config

__all__ = ["DEFAULT_DEBOUNCE_MS", "read_config", "watch_file"]

logger = logging.getLogger("toolsift.mcp_sessions")

# A save is one burst of events; watchfiles yields a burst once no event came for
# its `step` (50 ms), and never holds one longer than the debounce.
DEFAULT_DEBOUNCE_MS = 300
_STEP_MS = 50


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


async def watch_file(path: Path, on_change: Callable[[], Awaitable[object]], *, debounce_ms: int,
                     task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    """Call ``on_change()`` after each burst of changes to ``path``, until cancelled.

    ``on_change`` also runs once when the watch is in place (before
    ``task_status.started()``), for edits made before the watch existed. An
    exception it raises is logged and the watch goes on. On cancellation the
    watch thread is told to stop and this returns within one step (50 ms).

    Raises:
        ConfigError: The file's folder does not exist.
    """
    target = path.absolute()
    if not target.parent.is_dir():
        raise ConfigError("cannot watch the config file: its folder does not exist", path=target)

    def is_target(change: Change, changed: str) -> bool:
        return Path(changed) == target

    stop = anyio.Event()
    changes = awatch(target.parent, watch_filter=is_target, debounce=debounce_ms, step=_STEP_MS,
                     stop_event=stop, recursive=False)
    async with anyio.create_task_group() as group:
        group.start_soon(_follow, changes, on_change, target)
        # awatch installs its watch synchronously in its first step, before its first
        # await; _follow was scheduled before this task resumes, so after one
        # checkpoint the watch exists and no later edit can be missed.
        await anyio.lowlevel.checkpoint()
        await _call(on_change, target)
        task_status.started()
        try:
            await anyio.sleep_forever()
        finally:
            # The watch thread only looks at this event; without it, cancelling would
            # wait for the thread's next timeout.
            stop.set()


async def _follow(changes: AsyncIterator[object], on_change: Callable[[], Awaitable[object]], target: Path) -> None:
    async for _ in changes:
        await _call(on_change, target)


async def _call(on_change: Callable[[], Awaitable[object]], target: Path) -> None:
    try:
        await on_change()
    except Exception:
        # A reload reports bad files itself; anything else must not end the watch, nor go unseen.
        logger.exception("Reloading the config file %s failed", target)
