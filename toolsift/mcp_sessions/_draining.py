"""Draining, in one place: how long a retired session may finish its calls, what callers hear, how it ends.

A session whose server was removed or changed stops taking calls in the very
step that retires it; the calls in flight may finish for ``drainSeconds``
(the server's own, else the file's top level, else the application's
default); then the session closes and whatever still runs is cancelled,
each call returning an error result that says why. A :class:`Drain` is the
record of one such drain: the session holds it (it decides what a new call
hears) and the session group reads it (what subscribers and the registry are
told).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import final

from .._exceptions import ServerDraining
from ..config import ServerConfig
from ._tracker import CallCounts

__all__ = ["DEFAULT_DRAIN_SECONDS", "DRAINED", "Drain", "check_drain_seconds", "drain_seconds_for"]

DEFAULT_DRAIN_SECONDS = 30.0
# Why a drained session closed: the text of each call its end cancelled.
DRAINED = "the session was drained: its server was removed or changed"


def check_drain_seconds(seconds: float) -> float:
    """``seconds`` as a float, checked to be a drain time.

    Raises:
        ValueError: It is negative or not finite.
    """
    if not (math.isfinite(seconds) and seconds >= 0):
        raise ValueError(f"drain_seconds must be a finite number of seconds >= 0, got {seconds!r}")
    return float(seconds)


def drain_seconds_for(config: ServerConfig, default: float) -> float:
    """How long a session of ``config`` may drain: the server's own ``drainSeconds`` wins over ``default``."""
    return default if config.drain_seconds is None else config.drain_seconds


@final
class Drain:
    """One session's drain: when it began, how long its calls may take, and what it tells whom.

    Args:
        server: The server's name.
        seconds: How long the calls in flight may finish before they are cancelled.
        removed: Whether the server was removed from the config (else it was replaced).

    Raises:
        ValueError: ``seconds`` is negative or not finite.
    """

    __slots__ = ("removed", "seconds", "server", "since")

    def __init__(self, server: str, seconds: float, *, removed: bool) -> None:
        self.server = server
        self.seconds = check_drain_seconds(seconds)
        self.removed = removed
        self.since = datetime.now(UTC).isoformat(timespec="seconds")

    def __repr__(self) -> str:
        return f"Drain({self.server!r}, seconds={self.seconds:g}, since={self.since!r}, removed={self.removed})"

    def error(self) -> ServerDraining:
        """What a new call gets while the session drains (and while it closes at the end)."""
        return ServerDraining(self.server, self.since)

    @property
    def announcement(self) -> str:
        """Why the session stopped taking calls and for how long its calls may finish (``server.draining``)."""
        why = "removed from the config" if self.removed else "replaced by a session with the new settings"
        return f"{why}; calls in flight may finish within {self.seconds:g}s"

    def outcome(self, ended: CallCounts) -> str:
        """How the calls in flight ended, in words (``server.removed``)."""
        text = "every call in flight had finished"
        if ended.cancelled:
            total, verb = ended.finished + ended.cancelled, "was" if ended.cancelled == 1 else "were"
            text = (
                f"drainSeconds ({self.seconds:g}s) ran out: "
                f"{ended.cancelled} of {total} calls in flight {verb} cancelled"
            )
        return text if self.removed else f"its old session closed: {text}"
