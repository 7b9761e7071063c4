"""Watching skill folders that may be deleted, recreated, or not exist yet.

watchfiles watches the folders that exist when it starts, and a watched folder
that is deleted stays dead: after ``rm -rf skills && git checkout skills`` (or
any tool that replaces a folder) no event ever comes again, and a folder
created later is never seen. So besides each existing folder (recursively),
the folder's *anchor* is watched without recursion: its parent, or, for a
folder that does not exist, its nearest existing ancestor. An anchor event on
the way to a folder (the folder, or a missing ancestor of it, appearing or
disappearing) re-arms every watch from a fresh look at the disk. Anchor events
for anything else are filtered out, so a busy home folder costs nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.lowlevel
from anyio.abc import TaskStatus
from watchfiles import Change, awatch

__all__ = ["watch_folders"]

#: How often the watch threads look at their stop event, in milliseconds.
_STEP_MS = 50


@dataclass(frozen=True)
class _Plan:
    """What to watch for a set of folders, as the disk is now.

    Attributes:
        folders: The folders that exist, watched recursively.
        anchors: Where each folder's appearance or removal shows, watched without recursion.
    """

    folders: tuple[Path, ...]
    anchors: tuple[Path, ...]

    @classmethod
    def of(cls, folders: Sequence[Path]) -> _Plan:
        return cls(tuple(f for f in folders if f.is_dir()), tuple(dict.fromkeys(map(_anchor, folders))))


def _anchor(folder: Path) -> Path:
    """The folder's nearest existing ancestor (its parent while it exists)."""
    return next((parent for parent in folder.parents if parent.is_dir()), Path(folder.anchor))


async def watch_folders(
    folders: Sequence[Path],
    on_change: Callable[[], Awaitable[object]],
    *,
    debounce_ms: int,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Call ``on_change()`` after each burst of changes under ``folders``, until cancelled.

    ``on_change`` also runs each time the watches are (re-)armed, after they are
    in place, so nothing written before they existed is missed. Readiness is
    reported once the first watches are in place and the first ``on_change``
    returned. On cancellation the watch threads are told to stop and the call
    returns within about one polling step (50 ms).
    """
    ready = False
    while True:
        plan = _Plan.of(folders)
        stop, rearm = anyio.Event(), anyio.Event()
        async with anyio.create_task_group() as tg:
            if plan.folders:
                tg.start_soon(
                    _follow,
                    awatch(*plan.folders, debounce=debounce_ms, step=_STEP_MS, stop_event=stop),
                    rearm,
                    on_change,
                )
            tg.start_soon(
                _follow,
                awatch(
                    *plan.anchors,
                    watch_filter=_on_the_way(folders),
                    recursive=False,
                    debounce=debounce_ms,
                    step=_STEP_MS,
                    stop_event=stop,
                ),
                rearm,
            )
            try:
                # awatch installs its watches synchronously in its first step, before
                # its first await; the followers were scheduled before this task, so
                # after one checkpoint the watches exist and no later edit can be missed.
                await anyio.lowlevel.checkpoint()
                await on_change()
                if not ready:
                    task_status.started()
                    ready = True
                if _Plan.of(folders) == plan:  # else something appeared or went meanwhile: re-arm now
                    await rearm.wait()
            finally:
                # The watch threads only look at this event; without it, leaving
                # would wait for their next timeout (seconds).
                stop.set()


def _on_the_way(folders: Sequence[Path]) -> Callable[[Change, str], bool]:
    """An anchor filter keeping events for the folders themselves or their ancestors."""

    def relevant(_change: Change, path: str) -> bool:
        changed = Path(path)
        return any(changed == folder or changed in folder.parents for folder in folders)

    return relevant


async def _follow(
    changes: AsyncIterator[object], rearm: anyio.Event, on_change: Callable[[], Awaitable[object]] | None = None
) -> None:
    """Call ``on_change`` after each burst of ``changes``; without it (an anchor), ask for a re-arm."""
    try:
        async for _ in changes:
            if on_change is None:
                rearm.set()
            else:
                await on_change()
    except FileNotFoundError:
        # A watched path went away between the look at the disk and the watch.
        rearm.set()
