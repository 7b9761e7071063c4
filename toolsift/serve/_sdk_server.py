"""The SDK's low-level ``Server`` as toolsift serves it: what it advertises is read at each handshake.

``streamable_http_app`` and ``InMemoryTransport`` call
``create_initialization_options()`` without arguments, so the default
(``tools.listChanged`` advertised to handshake-era clients too) has to
change here rather than at each call site.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp.types as types
from mcp.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

__all__ = ["SdkServer"]


class SdkServer(Server[Any]):
    """The SDK server, advertising ``tools.listChanged`` to handshake-era clients too.

    ``streamable_http_app`` and ``InMemoryTransport`` call
    ``create_initialization_options()`` without arguments, so the default has
    to change here rather than at each call site. Its instructions are read
    at each handshake from ``instructions_of``, so a gateway's reflect the
    upstream servers connected then; so are the upstream extensions it passes
    through (``passed_through``), advertised beside its own ``extensions``, and
    the upstream servers' tasks offered to handshake-era clients (``core_tasks``).
    """

    def __init__(
        self,
        *args: Any,
        instructions_of: Callable[[], str],
        passed_through: Callable[[], dict[str, dict[str, Any]]] = dict,
        core_tasks: Callable[[], types.ServerTasksCapability | None],
        **kwargs: Any,
    ) -> None:
        self._instructions_of = instructions_of
        self._passed_through = passed_through
        self._core_tasks = core_tasks
        super().__init__(*args, **kwargs)

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        own = extensions if extensions is not None else self.extensions
        capabilities = super().get_capabilities(
            notification_options,
            experimental_capabilities,
            {**self._passed_through(), **own},
            protocol_version=protocol_version,
        )
        tasks = self._core_tasks() if protocol_version not in MODERN_PROTOCOL_VERSIONS else None
        return capabilities.model_copy(update={"tasks": tasks}) if tasks is not None else capabilities

    @property
    def instructions(self) -> str:
        return self._instructions_of()

    @instructions.setter
    def instructions(self, value: str | None) -> None:
        """``Server.__init__`` sets it; the text comes from ``instructions_of``."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True), experimental_capabilities, extensions
        )
