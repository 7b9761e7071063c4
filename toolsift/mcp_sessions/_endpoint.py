"""Where a session connects to, with ``${VAR}`` and ``secret://`` references resolved.

Resolution happens at every connect (so a restart picks up a rotated secret)
and the result lives only in the owner task of the connection. The values that
came out of it are collected so that anything the session logs can be masked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..config import ServerConfig, TransportKind, child_environment, resolve_server

__all__ = ["Endpoint", "Redactor", "resolve_endpoint"]

REDACTED = "[redacted]"
# Shorter values ("1", "true", "info") are configuration, not credentials, and
# masking them would garble every log line that happens to contain them.
_MIN_SECRET_CHARS = 6


class Redactor:
    """Masks known secret values in text, longest first.

    Args:
        secrets: Values that must never be shown.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._pattern: re.Pattern[str] | None = None
        self._parts: tuple[str, ...] = ()
        self.update(secrets)

    def update(self, secrets: Iterable[str]) -> None:
        """Replace the set of masked values."""
        parts: set[str] = set()
        for value in secrets:
            # A header such as "Bearer abc..." leaks through its token alone too.
            parts.update(p for p in (value, *value.split()) if len(p) >= _MIN_SECRET_CHARS)
        self._parts = tuple(sorted(parts, key=len, reverse=True))
        self._pattern = re.compile("|".join(map(re.escape, self._parts))) if self._parts else None

    def __bool__(self) -> bool:
        """Whether there is anything to mask."""
        return self._pattern is not None

    def __call__(self, text: str) -> str:
        # A substring search per secret is far faster than the alternation on text that holds none,
        # which is nearly all text (tool results run to megabytes).
        if self._pattern is None or not any(part in text for part in self._parts):
            return text
        return self._pattern.sub(REDACTED, text)


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
        ConfigError: The server has neither ``command`` nor ``url``.
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
