"""``McpSessionGroup``: the task group that owns every session, keyed by server name."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, final

import anyio
from anyio.abc import TaskGroup

from ._config import ServerConfig
from ._options import SessionOptions
from ._session import McpSession
from ._state import SessionStatus

if TYPE_CHECKING:
    from ..registry import ToolRegistry

__all__ = ["McpSessionGroup", "format_status", "status_rows"]

logger = logging.getLogger("toolsift.mcp_sessions")


@final
class McpSessionGroup(Mapping[str, McpSession]):
    """Runs many sessions side by side; leaving ``async with`` closes them all.

    It is a read-only mapping from server name to session. Every session's
    owner task runs in the group's task group, guarded so that one session's
    failure never cancels the others.

    Args:
        registry: Where sessions register their tools (None: sessions keep them).
        options: Settings shared by every session of the group.
    """

    def __init__(self, registry: ToolRegistry | None = None, *, options: SessionOptions | None = None) -> None:
        self._registry = registry
        self._options = options if options is not None else SessionOptions()
        self._sessions: dict[str, McpSession] = {}
        self._skipped: dict[str, str] = {}
        self._retiring: set[McpSession] = set()
        self._group: TaskGroup | None = None

    def __getitem__(self, name: str) -> McpSession:
        return self._sessions[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._sessions)

    def __len__(self) -> int:
        return len(self._sessions)

    def __repr__(self) -> str:
        return f"McpSessionGroup({', '.join(f'{n}={s.state.value}' for n, s in self._sessions.items())})"

    @property
    def skipped(self) -> Mapping[str, str]:
        """Servers that got no session, with the reason (disabled, nothing to connect to)."""
        return dict(self._skipped)

    async def __aenter__(self) -> McpSessionGroup:
        if self._group is not None:
            raise RuntimeError("McpSessionGroup is already entered")
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc_val: BaseException | None,
                        exc_tb: TracebackType | None) -> bool | None:
        group, self._group = self._group, None
        assert group is not None, "__aexit__ without __aenter__"
        try:
            if exc_type is None:
                async with anyio.create_task_group() as closers:
                    for session in [*self._sessions.values(), *self._retiring]:
                        closers.start_soon(session.close)
        finally:
            # On an error the owners are cancelled; the SDK still stops every server. The body's
            # own exception propagates as it is, not wrapped in an exception group.
            if exc_type is not None:
                group.cancel_scope.cancel()
            await group.__aexit__(None, None, None)
        return None

    def _task_group(self) -> TaskGroup:
        if self._group is None:
            raise RuntimeError("McpSessionGroup is not running; use 'async with McpSessionGroup(...)'")
        return self._group

    def spawn(self, config: ServerConfig) -> McpSession | None:
        """Create a session for ``config`` and start its owner task, without waiting.

        Returns None (and records why in :attr:`skipped`) for a disabled server
        or one with nothing to connect to.

        Raises:
            ValueError: A session with that name is already in the group.
            RuntimeError: The group is not entered.
        """
        group = self._task_group()
        if config.name in self._sessions:
            raise ValueError(f"MCP server {config.name!r} already has a session in this group")
        if not config.enabled:
            self._skipped[config.name] = "disabled (enabled: false)"
            logger.info("MCP server %r is disabled; not started", config.name)
            return None
        if config.transport_kind is None:
            self._skipped[config.name] = "neither 'command' nor 'url' is set"
            logger.warning("MCP server %r has neither 'command' nor 'url'; skipped", config.name)
            return None
        self._skipped.pop(config.name, None)
        session = McpSession(config, registry=self._registry, options=self._options)
        self._sessions[config.name] = session
        group.start_soon(_guarded, session, name=f"mcp-session {config.name}")
        return session

    async def start_all(self, servers: Iterable[ServerConfig]) -> dict[str, McpSession]:
        """Start every server in parallel; wait until each non-lazy one is ready or failed.

        A server that fails to start ends in state ``error``; the rest go on.
        Returns the new sessions by name.
        """
        started = [s for s in (self.spawn(config) for config in servers) if s is not None]
        async with anyio.create_task_group() as waiters:
            for session in started:
                if not session.config.lazy:
                    waiters.start_soon(session.wait_settled)
        return {s.name: s for s in started}

    async def add(self, config: ServerConfig) -> McpSession | None:
        """Start one server and wait until it is ready or failed (lazy ones are not waited for)."""
        session = self.spawn(config)
        if session is not None and not config.lazy:
            await session.wait_settled()
        return session

    def retire(self, name: str, *, deadline: float | None = None) -> McpSession:
        """Take a session out of the group and drain it in the background.

        Its tools leave the registry at once; a new session for the same name
        may start right away beside it.

        Raises:
            KeyError: No session has that name.
        """
        group = self._task_group()
        session = self._sessions.pop(name)
        self._retiring.add(session)

        async def drain() -> None:
            try:
                await session.drain(deadline)
            finally:
                self._retiring.discard(session)

        group.start_soon(drain, name=f"mcp-drain {name}")
        return session

    async def replace(self, config: ServerConfig, *, deadline: float | None = None) -> McpSession | None:
        """Drain the session of ``config.name`` (if any) and start a new one from ``config``."""
        if config.name in self._sessions:
            self.retire(config.name, deadline=deadline)
        return await self.add(config)

    def status(self) -> list[SessionStatus]:
        """One row per session, by server name."""
        return status_rows(self)


async def _guarded(session: McpSession) -> None:
    # A bug in one session must not cancel its siblings through the shared task group.
    try:
        await session.run()
    except Exception:
        logger.exception("MCP session %r stopped on an unexpected error", session.name)


def status_rows(sessions: Mapping[str, McpSession] | Iterable[McpSession]) -> list[SessionStatus]:
    """The status table of some sessions, one row each, by server name."""
    values = sessions.values() if isinstance(sessions, Mapping) else sessions
    return sorted((s.status() for s in values), key=lambda row: row.server)


def format_status(rows: Iterable[SessionStatus]) -> str:
    """The rows as a plain-text table (server, transport, visibility, state, tools, error)."""
    header = ("server", "transport", "visibility", "state", "tools", "error")
    table = [header, *((r.server, r.transport, r.visibility, r.state.value, str(r.tools), r.error or "")
                       for r in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    return "\n".join(
        ("  ".join(cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)) + "  " + row[-1]).rstrip()
        for row in table
    )
