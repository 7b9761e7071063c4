"""Keeping the registry in step with one session's tools."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .._exceptions import ToolsiftError
from ..config import ServerConfig

if TYPE_CHECKING:
    from ..registry import Tool, ToolRegistry

__all__ = ["ToolPublisher"]

logger = logging.getLogger("toolsift.mcp_sessions")


class ToolPublisher:
    """Puts a session's tools under its namespace, and takes them out again.

    ``replace_server`` swaps a whole namespace, so the publisher first checks
    that whatever is there now is this session's own: it never takes over a
    namespace another server fills (two servers with one ``toolPrefix``), and
    it never removes the tools of a newer session that replaced it.

    Args:
        config: The server (namespace, internal or global).
        registry: Where the tools go.
    """

    def __init__(self, config: ServerConfig, registry: ToolRegistry) -> None:
        self._config = config
        self._registry = registry

    def _ours_only(self, mine: Sequence[Tool]) -> tuple[bool, Sequence[Tool]]:
        registered = self._registry.tools(server=self._config.namespace)
        ids = {id(tool) for tool in mine}
        return all(id(tool) in ids for tool in registered), registered

    def publish(
        self, tools: Sequence[Tool], *, previous: Sequence[Tool], held: Mapping[str, tuple[str, str]]
    ) -> str | None:
        """Swap ``previous`` (this session's tools now registered) for ``tools``; return a problem, if any.

        ``held`` (see :meth:`ToolRegistry.hold_back`) explains the tools held back, in the same step.
        """
        namespace = self._config.namespace
        ours, registered = self._ours_only(previous)
        if not ours:
            other = next(t for t in registered if id(t) not in {id(p) for p in previous})
            owner = f"MCP server {other.spec.server!r}" if other.spec.server else "other tools"
            problem = (
                f"its tools could not be registered: the namespace {namespace!r} is already used by "
                f"{owner} (give one of them a different toolPrefix)"
            )
        else:
            try:
                self._registry.replace_server(namespace, tools, internal=self._config.internal_only)
                self._registry.hold_back(namespace, held)
                return None
            except ToolsiftError as exc:
                problem = f"its tools could not be registered: {exc}"
        logger.error("MCP server %r: %s", self._config.name, problem)
        return problem

    def withdraw(self, tools: Sequence[Tool]) -> None:
        """Remove ``tools`` if they are what the namespace holds now."""
        ours, registered = self._ours_only(tools)
        if registered and ours:
            self._registry.remove_server(self._config.namespace)
            self._registry.hold_back(self._config.namespace, {})
