"""What tests of programs run under bubblewrap share: whether it is here, and waiting on processes by marker."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from waits import poll_until

BWRAP = shutil.which("bwrap")

#: Tests that run programs: they need bubblewrap for real (Debian package ``bubblewrap``).
needs_bwrap = pytest.mark.skipif(
    BWRAP is None, reason="bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
)


def running_with(marker: str) -> list[int]:
    """Host PIDs of live (not zombie) processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue  # gone while we looked
        if marker in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


async def wait_gone(marker: str) -> None:
    """Return once no live process holds ``marker`` (polled: another process's end gives no event)."""
    await poll_until(lambda: not running_with(marker))


async def wait_running(marker: str) -> None:
    """Return once a live process holds ``marker``."""
    await poll_until(lambda: running_with(marker))


def marked_seconds(whole: int) -> str:
    """A ``sleep`` duration of about ``whole`` seconds that no other process on the machine has (a marker)."""
    return f"{whole}.{os.getpid()}{time.monotonic_ns()}"
