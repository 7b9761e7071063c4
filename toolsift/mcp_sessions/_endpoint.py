"""Where a session connects to, with ``${VAR}`` and ``secret://`` references resolved: one type per transport.

Resolution happens at every connect (so a restart picks up a rotated secret)
and the result lives only in the owner task of the connection. The values that
came out of it are collected so that anything the session logs can be masked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, final

from ..config import HttpServer, ServerConfig, StdioServer
from ..config._internal import child_environment, resolve_server

__all__ = ["Endpoint", "HttpEndpoint", "StdioEndpoint", "resolve_endpoint"]


@final
@dataclass(frozen=True, repr=False, kw_only=True)
class StdioEndpoint:
    """A child process to spawn; never logged or shown.

    Attributes:
        command: Program to spawn.
        args: Its arguments.
        env: The child's whole environment.
        cwd: The child's working directory (None: this process's).
        secrets: Values that came from the config's env and references, to mask.
    """

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    secrets: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"StdioEndpoint(env_keys={sorted(self.env)!r})"


@final
@dataclass(frozen=True, repr=False, kw_only=True)
class HttpEndpoint:
    """A URL to reach over Streamable HTTP or the legacy HTTP+SSE; never logged or shown.

    Attributes:
        kind: ``http`` (Streamable HTTP) or ``sse``.
        url: The endpoint.
        headers: Headers sent with every request.
        auth_secrets: The resolved ``auth.clientId`` / ``auth.clientSecret`` / ``auth.privateKey``.
        secrets: Values that came from the config's headers and references, to mask.
    """

    kind: Literal["http", "sse"] = "http"
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    auth_secrets: Mapping[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"HttpEndpoint(kind={self.kind!r}, header_keys={sorted(self.headers)!r})"


Endpoint: TypeAlias = StdioEndpoint | HttpEndpoint


def _referenced(redacted: frozenset[str], values: Mapping[str, str | None]) -> list[str]:
    """The values of the settings that came from references (``command``, ``args[1]``, ``url``...)."""
    return [value for name, value in values.items() if name in redacted and value is not None]


def resolve_endpoint(config: ServerConfig) -> Endpoint:
    """Resolve ``config`` into the parameters of one connection, of its transport.

    Blocking (it may read secret files or run resolver plug-ins): call it from
    a worker thread.

    Raises:
        SecretError: A reference cannot be resolved (the message names it, not a value).
    """
    match config:
        case StdioServer():
            stdio = resolve_server(config)
            cwd = None if stdio.cwd is None else str(stdio.cwd)
            arguments = {f"args[{i}]": arg for i, arg in enumerate(stdio.args)}
            return StdioEndpoint(
                command=stdio.command,
                args=stdio.args,
                env=child_environment(stdio),
                cwd=cwd,
                secrets=(
                    *stdio.env.values(),
                    *_referenced(stdio.redacted, {"command": stdio.command, "cwd": cwd, **arguments}),
                ),
            )
        case HttpServer():
            http = resolve_server(config)
            return HttpEndpoint(
                kind=http.transport,
                url=http.url,
                headers=dict(http.headers),
                auth_secrets=dict(http.auth_secrets),
                secrets=(
                    *http.headers.values(),
                    *http.auth_secrets.values(),
                    *_referenced(http.redacted, {"url": http.url}),
                ),
            )
