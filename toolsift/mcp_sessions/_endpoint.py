"""Where a session connects to, with ``${VAR}`` and ``secret://`` references resolved.

Resolution happens at every connect (so a restart picks up a rotated secret)
and the result lives only in the owner task of the connection. The values that
came out of it are collected so that anything the session logs can be masked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..config import ServerConfig, TransportKind, child_environment, resolve_server

__all__ = ["Endpoint", "resolve_endpoint"]


@dataclass(frozen=True, repr=False)
class Endpoint:
    """A server's resolved connection parameters; never logged or shown.

    Attributes:
        kind: ``stdio``, ``http`` or ``sse``.
        command: Program to spawn (stdio).
        args: Its arguments.
        env: The child's whole environment (stdio).
        cwd: The child's working directory.
        url: The endpoint (http, sse).
        headers: Headers sent with every HTTP request.
        auth_secrets: The resolved ``auth.clientSecret`` / ``auth.privateKey``.
        secrets: Values that came from the config's env and headers, to mask.
    """

    kind: TransportKind
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    auth_secrets: Mapping[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"Endpoint(kind={self.kind!r}, env_keys={sorted(self.env)!r}, header_keys={sorted(self.headers)!r})"


def resolve_endpoint(config: ServerConfig) -> Endpoint:
    """Resolve ``config`` into the parameters of one connection.

    Blocking (it may read secret files or run resolver plug-ins): call it from
    a worker thread.

    Raises:
        SecretError: A reference cannot be resolved (the message names it, not a value).
    """
    resolved = resolve_server(config)
    secrets = [*resolved.env.values(), *resolved.headers.values(), *resolved.auth_secrets.values()]
    for name in resolved.redacted:
        # Settings that came from references: command, args[i], url, cwd.
        if name.startswith("args["):
            secrets.append(resolved.args[int(name[5:-1])])
        elif name in ("command", "url", "cwd"):
            value = getattr(resolved, name)
            if value is not None:
                secrets.append(str(value))
    return Endpoint(
        kind=resolved.transport,
        command=resolved.command,
        args=resolved.args,
        env=child_environment(resolved) if resolved.transport == "stdio" else {},
        cwd=str(resolved.cwd) if resolved.cwd is not None else None,
        url=resolved.url,
        headers=dict(resolved.headers),
        auth_secrets=dict(resolved.auth_secrets),
        secrets=tuple(secrets),
    )
