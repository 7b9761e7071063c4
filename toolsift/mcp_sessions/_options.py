"""What the application decides for every session: restart policy, roots, sampling, limits."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mcp.client.session import SamplingFnT

__all__ = ["RestartPolicy", "SessionOptions"]


@dataclass(frozen=True)
class RestartPolicy:
    """How a session reconnects after its server crashed or its connection dropped.

    The n-th restart in a row waits ``min(initial_delay * 2 ** (n - 1), max_delay)``
    seconds: 1, 2, 4, 8, 16, 30, 30 ... with the defaults. The server's own
    ``maxRestarts`` caps how many restarts in a row are tried before the session
    gives up (state ``error``). A connection that stayed up for ``stable_after``
    seconds resets the count, so a server that crashes once a day is not given up
    on after a week.

    Attributes:
        initial_delay: Seconds before the first restart.
        max_delay: Ceiling of the doubling delay.
        stable_after: Seconds of healthy connection after which the count resets.
    """

    initial_delay: float = 1.0
    max_delay: float = 30.0
    stable_after: float = 60.0

    def delay(self, restart: int) -> float:
        """Seconds to wait before restart number ``restart`` (1-based)."""
        return float(min(self.initial_delay * 2 ** max(restart - 1, 0), self.max_delay))


@dataclass(frozen=True)
class SessionOptions:
    """Application-level settings shared by the sessions of one group.

    Attributes:
        workspace: When set, offered to servers as their one MCP root.
        sampling_callback: Answers ``sampling/createMessage`` requests from servers.
            None (the default) refuses them, and the client does not advertise
            the sampling capability.
        restart: Backoff of crash restarts.
        stderr_lines: How many recent stderr lines of a stdio server are kept.
        drain_seconds: Default time :meth:`McpSession.drain` lets in-flight calls finish.
    """

    workspace: Path | None = None
    sampling_callback: SamplingFnT | None = None
    restart: RestartPolicy = field(default_factory=RestartPolicy)
    stderr_lines: int = 200
    drain_seconds: float = 30.0
