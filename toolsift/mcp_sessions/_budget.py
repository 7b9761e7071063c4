"""How many restarts a session may make now: ``maxRestarts`` within a sliding window.

A budget that only ever ran down would let a few bad calls (each crashing the
server) disable it for good. Here a restart counts only while it is younger
than the window, and a connection that stayed healthy long enough forgives
every earlier one. When the budget is spent the session pauses until the
oldest restart leaves the window, then starts the server again: no sequence
of crashes disables it for longer than one window. Only ``maxRestarts: 0``
(or ``restartOnCrash: false``) means never.
"""

from __future__ import annotations

from collections import deque

from ._options import RestartPolicy

__all__ = ["RestartBudget"]


class RestartBudget:
    """The restarts of one session inside the window, and how long the next one must wait.

    Args:
        max_restarts: Restarts allowed within ``policy.window`` seconds.
        policy: Backoff delays, window and healthy period.
    """

    def __init__(self, max_restarts: int, policy: RestartPolicy) -> None:
        self._max = max_restarts
        self._policy = policy
        self._times: deque[float] = deque()

    def count(self, now: float) -> int:
        """Restarts within the window that ends at ``now``."""
        while self._times and now - self._times[0] >= self._policy.window:
            self._times.popleft()
        return len(self._times)

    def spent(self, now: float) -> bool:
        """True when a restart at ``now`` would be over the budget (it has to wait for the window)."""
        return self.count(now) >= self._max

    def next_delay(self, now: float) -> float | None:
        """Seconds before the next restart may start; None when restarts are off (``maxRestarts`` 0)."""
        count = self.count(now)
        if count < self._max:
            return self._policy.delay(count + 1)
        if not self._times:
            return None
        # Until the oldest restart leaves the window, and never sooner than the backoff.
        return max(self._times[0] + self._policy.window - now, self._policy.delay(count + 1))

    def record(self, now: float) -> None:
        """Count a restart made at ``now``."""
        self._times.append(now)

    def forgive(self) -> None:
        """Forget every restart so far (the last connection stayed up for ``policy.stable_after``)."""
        self._times.clear()
