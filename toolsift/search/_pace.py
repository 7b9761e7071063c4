"""Letting the event loop run while the index builds in a worker thread.

A worker thread running Python code keeps the GIL until the interpreter takes
it away, every ``sys.getswitchinterval()`` (5 ms); a thread that asks for it
meanwhile waits that long, and longer when the machine is busy. An event loop
asks for it after every wait, so a build in a worker thread stalls it by 5-25
ms at a time. Giving the GIL away on purpose (``time.sleep(0)``) every
millisecond of build work hands it over at once to a thread that waits for it,
and costs a microsecond when none does.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

__all__ = ["paced"]

T = TypeVar("T")
INTERVAL = 0.001


def paced(items: Iterable[T], interval: float = INTERVAL) -> Iterator[T]:
    """``items``, giving the GIL away about every ``interval`` seconds spent between them."""
    deadline = time.perf_counter() + interval
    for item in items:
        yield item
        if time.perf_counter() >= deadline:
            time.sleep(0)
            deadline = time.perf_counter() + interval
