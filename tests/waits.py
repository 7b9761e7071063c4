"""Waiting for what another process does, where it gives no event: the tests' one poll loop.

A test waits for an event wherever there is one (a session's or a manager's
events, ``task_status.started``, a stream). Some things announce themselves
only in the world outside: a file another process writes, a process that
exits, a Redis key, a log line written from another task. For those,
:func:`poll_until` looks again and again, and only pytest-timeout's hang guard
(``timeout`` in pyproject) limits the wait: a slower machine waits longer, it
does not fail.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

import anyio

__all__ = ["CHILD_SECONDS", "POLL_SECONDS", "poll_until"]

T = TypeVar("T")
# Short enough not to slow a test down, long enough not to starve the process being waited for.
POLL_SECONDS = 0.02
# For a blocking wait on a child process (subprocess.run, communicate, wait): just under the 600 s hang guard,
# so that a stuck child is killed and its output shown before the guard ends the whole worker.
CHILD_SECONDS = 570


async def poll_until(check: Callable[[], T | Awaitable[T]], *, interval: float = POLL_SECONDS) -> T:
    """Call ``check`` (sync or async) until it returns something truthy, and return that.

    An exception ``check`` raises ends the wait (say, a process that exited
    before it wrote the file waited for).
    """
    while True:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return cast(T, value)
        await anyio.sleep(interval)
