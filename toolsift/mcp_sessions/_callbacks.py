"""What servers may ask of toolsift, and who answers: sampling, elicitation, log messages, resource updates, sign-in.

The SDK's callbacks know the connection, not the server; these take the
server's name first, so that one :class:`ClientCallbacks` serves every session
of a group and an answer can say (or a person can see) which server asked.

A callback left ``None`` is not offered: the client does not advertise the
capability, and a server that asks anyway is refused by the SDK. Log messages
always reach Python logging (``toolsift.server.<name>``); a ``logging``
callback sees them too.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Protocol

import mcp.types as types
from mcp.client.context import ClientRequestContext
from mcp.shared.auth import AuthorizationCodeResult

__all__ = [
    "ClientCallbacks",
    "ElicitationHandler",
    "LogHandler",
    "ResourceUpdatedHandler",
    "SamplingHandler",
    "SignInHandler",
    "python_log_level",
]

SamplingAnswer = types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData
ElicitationAnswer = types.ElicitResult | types.ErrorData

# MCP's syslog levels on Python's scale.
_PYTHON_LEVELS: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


class SamplingHandler(Protocol):
    """Answers a server's ``sampling/createMessage``: a completion from the application's model."""

    def __call__(self, server: str, params: types.CreateMessageRequestParams) -> Awaitable[SamplingAnswer]: ...


class ElicitationHandler(Protocol):
    """Answers a server's ``elicitation/create`` (form or URL mode): what the person said."""

    def __call__(self, server: str, params: types.ElicitRequestParams) -> Awaitable[ElicitationAnswer]: ...


class LogHandler(Protocol):
    """Receives a server's ``notifications/message``."""

    def __call__(self, server: str, params: types.LoggingMessageNotificationParams) -> Awaitable[None]: ...


class ResourceUpdatedHandler(Protocol):
    """Receives a server's ``notifications/resources/updated`` for a subscribed URI."""

    def __call__(self, server: str, uri: str) -> Awaitable[None]: ...


class SignInHandler(Protocol):
    """Has a person sign in to a server's authorization server: open ``url``, wait for the redirect.

    Returns the ``code`` and ``state`` (and ``iss``) that came back to
    ``redirect_uri``. The CLI's handler opens a browser and listens on the
    loopback port; an application may show the URL its own way.
    """

    def __call__(self, server: str, url: str, redirect_uri: str) -> Awaitable[AuthorizationCodeResult]: ...


def python_log_level(level: str) -> int:
    """The Python logging level of an MCP log level (``notice`` is INFO, ``alert``/``emergency`` CRITICAL)."""
    return _PYTHON_LEVELS.get(level, logging.INFO)


@dataclass(frozen=True)
class ClientCallbacks:
    """How the application answers servers; shared by every session of a group.

    Attributes:
        sampling: Answers sampling requests; None refuses them (and the
            sampling capability is not advertised).
        elicitation: Answers elicitation requests; None refuses them.
        logging: Sees every log message (they reach Python logging regardless).
        resource_updated: Hears about updates of subscribed resources.
        log_level: On 2026-07-28 connections, where a server sends log
            messages only to requests that ask for them, the level asked for
            (None: no log messages). Handshake-era servers send theirs anyway.
        sign_in: Has a person sign in when an OAuth server (``auth`` with the
            ``authorization_code`` grant) holds no usable token; None makes the
            connection fail with the command that signs in (``toolsift auth login``).
    """

    sampling: SamplingHandler | None = None
    elicitation: ElicitationHandler | None = None
    logging: LogHandler | None = None
    resource_updated: ResourceUpdatedHandler | None = None
    log_level: types.LoggingLevel | None = None
    sign_in: SignInHandler | None = None

    @property
    def answers_requests(self) -> bool:
        """Whether servers may ask something (sampling or elicitation) and get an answer."""
        return self.sampling is not None or self.elicitation is not None

    def for_server(self, server: str) -> dict[str, Any]:
        """The SDK ``Client`` keyword arguments that route ``server``'s requests here."""
        kwargs: dict[str, Any] = {"logging_callback": self._log_callback(server), "log_level": self.log_level}
        if (sampling := self.sampling) is not None:

            async def sample(
                context: ClientRequestContext,
                params: types.CreateMessageRequestParams,
            ) -> SamplingAnswer:
                return await sampling(server, params)

            kwargs["sampling_callback"] = sample
        if (elicitation := self.elicitation) is not None:

            async def elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> ElicitationAnswer:
                return await elicitation(server, params)

            kwargs["elicitation_callback"] = elicit
        return kwargs

    def _log_callback(self, server: str) -> Any:
        python_logger = logging.getLogger(f"toolsift.server.{server}")
        handler = self.logging

        async def log(params: types.LoggingMessageNotificationParams) -> None:
            source = f" [{params.logger}]" if params.logger else ""
            python_logger.log(python_log_level(params.level), "%s%s: %s", server, source, params.data)
            if handler is not None:
                await handler(server, params)

        return log

    async def resource_changed(self, server: str, uri: str) -> None:
        """Pass an update of ``uri`` on (nothing happens without a ``resource_updated`` callback)."""
        if self.resource_updated is not None:
            await self.resource_updated(server, uri)
