"""What the application decides for every session: restart policy, roots, callbacks, limits."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import ServerConfig, ToolsiftConfig
from ._callbacks import ClientCallbacks
from ._draining import DEFAULT_DRAIN_SECONDS
from ._pins import ToolPins

if TYPE_CHECKING:
    from ._transport import SessionTransport

__all__ = ["RestartPolicy", "SessionOptions"]


@dataclass(frozen=True)
class RestartPolicy:
    """How a session reconnects after its server crashed or its connection dropped.

    The n-th restart within the window waits ``min(initial_delay * 2 ** (n - 1),
    max_delay)`` seconds: 1, 2, 4, 8, 16, 30, 30 ... with the defaults. The
    server's own ``maxRestarts`` caps the restarts within any ``window``
    seconds; past it the session waits in state ``error`` until the oldest
    restart leaves the window, then starts the server again. A connection that
    stayed up for ``stable_after`` seconds forgives every earlier restart, so a
    server that crashes once a day never comes near the cap.

    Attributes:
        initial_delay: Seconds before the first restart.
        max_delay: Ceiling of the doubling delay.
        stable_after: Seconds of healthy connection after which earlier restarts no longer count.
        window: Seconds a restart counts against ``maxRestarts``.
    """

    initial_delay: float = 1.0
    max_delay: float = 30.0
    stable_after: float = 60.0
    window: float = 300.0

    def delay(self, restart: int) -> float:
        """Seconds to wait before restart number ``restart`` (1-based)."""
        return float(min(self.initial_delay * 2 ** max(restart - 1, 0), self.max_delay))


@dataclass(frozen=True)
class SessionOptions:
    """Application-level settings shared by the sessions of one group.

    Attributes:
        workspace: When set, offered to servers as their first MCP root.
        roots: More folders offered as MCP roots, after the workspace.
        callbacks: How requests and notifications from servers are answered
            (sampling, elicitation, log messages, resource updates). By
            default sampling and elicitation are refused and not advertised.
        restart: Backoff of crash restarts.
        stderr_lines: How many recent stderr lines of a stdio server are kept.
        drain_seconds: Default time :meth:`McpSession.drain` lets in-flight calls finish.
        launch_check: Asked before every connect (in a worker thread): a text
            stops it with that reason. ``McpServerManager`` sets it from its
            ``trust`` so that no start, restart or lazy start runs a launch the
            project's trust does not cover.
        transports: Servers (by name) reached another way than their config's
            ``command`` or ``url`` says, such as a server object in this
            process (``MemoryTransport``); the config is still resolved and
            checked as for its own transport.
        pins: The pinned tool definitions each listing is checked against (see
            :class:`ToolPins`); None checks nothing. :meth:`for_config` pins in
            ``pinned-tools.json`` beside the trusted projects.
    """

    workspace: Path | None = None
    roots: tuple[Path, ...] = ()
    callbacks: ClientCallbacks = field(default_factory=ClientCallbacks)
    restart: RestartPolicy = field(default_factory=RestartPolicy)
    stderr_lines: int = 200
    drain_seconds: float = DEFAULT_DRAIN_SECONDS
    launch_check: Callable[[ServerConfig], str | None] | None = None
    transports: Mapping[str, SessionTransport] = field(default_factory=dict)
    pins: ToolPins | None = None

    @classmethod
    def for_config(cls, config: ToolsiftConfig) -> SessionOptions:
        """The options a config implies: its ``workspace`` and ``roots`` as roots, and its servers' pinned tools."""
        # Only a workspace the file sets is offered as a root; the default (the config's folder) is not a choice.
        workspace = config.workspace if "workspace" in config.model_fields_set else None
        return cls(workspace=workspace, roots=config.roots, pins=ToolPins.for_config(config))
