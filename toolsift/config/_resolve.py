"""Connect-time resolution: a server's settings with their references replaced by values, per transport.

Resolution happens right before a session spawns or connects, never at load
time, so a rotated secret or a changed variable is picked up by the next
connect, and resolved values exist only in the short-lived ``ResolvedServer``.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias, final, overload

from dotenv import dotenv_values
from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

from .._exceptions import SecretError
from .._redaction import MASK
from .._secrets._display import mask_url
from .._secrets._expand import expand_variables, has_references, written_in_full
from .._secrets._resolvers import is_secret_reference, resolve_secret
from ._oauth import OAuthConfig
from ._server import HttpServer, ServerConfig, StdioServer

__all__ = ["ResolvedHttp", "ResolvedServer", "ResolvedStdio", "child_environment", "resolve_server"]

# On top of the SDK's list (HOME, LOGNAME, PATH, SHELL, TERM, USER; the Windows set):
# locale so child programs print UTF-8, and the temp folder they should use.
_EXTRA_INHERITED = ("LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TMP", "TEMP")


def _masked(redacted: frozenset[str], name: str, value: str | None) -> str | None:
    return MASK if value is not None and name in redacted else value


@final
@dataclass(frozen=True, repr=False, kw_only=True)
class ResolvedStdio:
    """What it takes to spawn one stdio server, with every reference resolved.

    Build it with :func:`resolve_server`. Its repr masks every env value and
    every setting that came from a reference, so logging it is safe; the
    attributes themselves hold the real values for the transport.

    Attributes:
        name: The server's name.
        command: Program to spawn.
        args: Its arguments.
        env: The configured extra environment, ``envFile`` under ``env``; see :func:`child_environment`.
        cwd: Absolute working directory, or None to inherit the current one.
        redacted: Fields (``command``, ``args[1]``, ``env.KEY``...) whose value came from a reference,
            unless every reference took the default written beside it (the file shows all of it).
    """

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    redacted: frozenset[str] = field(default_factory=frozenset, compare=False)

    @property
    def transport(self) -> Literal["stdio"]:
        """Always ``stdio``."""
        return "stdio"

    def __repr__(self) -> str:
        args = tuple(_masked(self.redacted, f"args[{i}]", arg) for i, arg in enumerate(self.args))
        cwd = _masked(self.redacted, "cwd", None if self.cwd is None else str(self.cwd))
        return (
            f"ResolvedStdio(name={self.name!r}, command={_masked(self.redacted, 'command', self.command)!r}, "
            f"args={args!r}, env={dict.fromkeys(self.env, MASK)!r}, cwd={cwd!r})"
        )

    __str__ = __repr__


@final
@dataclass(frozen=True, repr=False, kw_only=True)
class ResolvedHttp:
    """What it takes to reach one HTTP server, with every reference resolved.

    Build it with :func:`resolve_server`. Its repr masks every header value,
    the URL's credentials and every setting that came from a reference.

    Attributes:
        name: The server's name.
        transport: ``http`` (Streamable HTTP) or ``sse``.
        url: The endpoint.
        headers: HTTP headers.
        auth_secrets: ``auth.clientSecret``, ``auth.privateKey``, ``auth.assertion``, the identity
            provider's ``clientSecret`` and ``idToken``, and a referenced ``auth.clientId``, resolved
            (keyed by their path under ``auth``).
        redacted: Fields (``url``, ``headers.KEY``...) whose value came from a reference,
            unless every reference took the default written beside it (the file shows all of it).
    """

    name: str
    transport: Literal["http", "sse"] = "http"
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    auth_secrets: Mapping[str, str] = field(default_factory=dict)
    redacted: frozenset[str] = field(default_factory=frozenset, compare=False)

    def __repr__(self) -> str:
        url = MASK if "url" in self.redacted else mask_url(self.url)
        return (
            f"ResolvedHttp(name={self.name!r}, transport={self.transport!r}, url={url!r}, "
            f"headers={dict.fromkeys(self.headers, MASK)!r}, auth_secrets={dict.fromkeys(self.auth_secrets, MASK)!r})"
        )

    __str__ = __repr__


ResolvedServer: TypeAlias = ResolvedStdio | ResolvedHttp
"""A server's connection settings with its references resolved: a :class:`ResolvedStdio` or a :class:`ResolvedHttp`."""


class _Resolver:
    """Resolves the values of one server, remembering which came from references."""

    def __init__(self, name: str, base_dir: Path, environ: Mapping[str, str]) -> None:
        self.name = name
        self.base_dir = base_dir
        self.environ = environ
        self.redacted: set[str] = set()

    def value(self, raw: str, field: str) -> str:
        name = self.name
        if is_secret_reference(raw):
            self.redacted.add(field)
            # `${...}` inside a reference is expanded first (secret://file/${HOME}/token);
            # the secret itself is never scanned for references.
            reference = expand_variables(raw, self.environ, server=name, field=field)
            return resolve_secret(reference, base_dir=self.base_dir, environ=self.environ, server=name, field=field)
        if has_references(raw) and not written_in_full(raw, self.environ):
            self.redacted.add(field)
        return expand_variables(raw, self.environ, server=name, field=field)

    def mapping(self, values: Mapping[str, str], field: str) -> dict[str, str]:
        return {key: self.value(raw, f"{field}.{key}") for key, raw in values.items()}

    def auth_secrets(self, auth: OAuthConfig | None) -> dict[str, str]:
        if auth is None:
            return {}
        provider = auth.identity_provider
        given = {
            "clientSecret": auth.client_secret,
            "privateKey": auth.private_key,
            "assertion": auth.assertion,
            "identityProvider.clientSecret": provider.client_secret if provider else None,
            "identityProvider.idToken": provider.id_token if provider else None,
        }
        if auth.client_id is not None and (has_references(auth.client_id) or is_secret_reference(auth.client_id)):
            given["clientId"] = auth.client_id  # a literal client ID is public, and used as written
        return {name: self.value(raw, f"auth.{name}") for name, raw in given.items() if raw is not None}

    def path(self, raw: str, field: str) -> Path:
        path = Path(self.value(raw, field)).expanduser()
        return path if path.is_absolute() else self.base_dir / path

    def env_file(self, raw: str) -> dict[str, str]:
        """The variables of a dotenv file (``envFile``), read now so that its secrets live only in the result."""
        path = self.path(raw, "envFile")
        try:
            text = path.read_text(encoding="utf-8-sig")
        except OSError as exc:
            reason = f"cannot read the env file: {exc.strerror or type(exc).__name__}"
            raise SecretError(str(path), reason, server=self.name, field="envFile") from None
        except UnicodeDecodeError:
            raise SecretError(str(path), "the env file is not UTF-8 text", server=self.name, field="envFile") from None
        # No interpolation: as in VS Code and Cursor, a value is taken as written.
        values = dotenv_values(stream=io.StringIO(text), interpolate=False)
        return {key: value for key, value in values.items() if value is not None}


@overload
def resolve_server(
    config: StdioServer, *, base_dir: Path | None = None, environ: Mapping[str, str] | None = None
) -> ResolvedStdio: ...
@overload
def resolve_server(
    config: HttpServer, *, base_dir: Path | None = None, environ: Mapping[str, str] | None = None
) -> ResolvedHttp: ...
def resolve_server(
    config: ServerConfig,
    *,
    base_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> ResolvedServer:
    """Resolve a server's ``${VAR}`` and ``secret://`` references, right before connecting.

    A :class:`StdioServer` resolves ``command``, ``args``, ``cwd`` and ``env``,
    and reads its ``envFile`` now, its variables under those of ``env``; an
    :class:`HttpServer` resolves ``url``, ``headers`` and its ``auth`` secrets.
    A relative ``cwd`` is made absolute against ``base_dir``. This call blocks
    while it reads secret files or runs plug-in resolvers; from async code run
    it in a worker thread (``await anyio.to_thread.run_sync(resolve_server, config)``).

    Args:
        config: The server, as loaded.
        base_dir: Folder for relative ``cwd`` and ``secret://file/`` paths;
            defaults to ``config.base_dir`` (the config file's folder).
        environ: Where ``${VAR}`` and ``secret://env/`` look; defaults to ``os.environ``.

    Returns:
        The resolved settings, of the server's transport; its repr masks secrets.

    Raises:
        SecretError: When a reference cannot be resolved; it names the
            reference, ``config.name`` and the field (``env.API_KEY``,
            ``args[2]``), never a value.
    """
    folder = config.base_dir if base_dir is None else base_dir
    resolver = _Resolver(config.name, folder, os.environ if environ is None else environ)
    match config:
        case HttpServer():
            url = resolver.value(config.url, "url")
            headers = resolver.mapping(config.headers, "headers")
            return ResolvedHttp(
                name=config.name,
                transport=config.transport_kind,
                url=url,
                headers=headers,
                auth_secrets=resolver.auth_secrets(config.auth),
                redacted=frozenset(resolver.redacted),
            )
        case StdioServer():
            command = resolver.value(config.command, "command")
            args = tuple(resolver.value(arg, f"args[{i}]") for i, arg in enumerate(config.args))
            cwd = None if config.cwd is None else resolver.path(config.cwd, "cwd")
            from_file = {} if config.env_file is None else resolver.env_file(config.env_file)
            return ResolvedStdio(
                name=config.name,
                command=command,
                args=args,
                env=from_file | resolver.mapping(config.env, "env"),
                cwd=cwd,
                redacted=frozenset(resolver.redacted),
            )


def child_environment(resolved: ResolvedStdio, *, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a stdio server is spawned with: a minimal inherited one plus its ``env``.

    The inherited part is the MCP SDK's safe list (``get_default_environment``:
    HOME, LOGNAME, PATH, SHELL, TERM, USER, or the Windows equivalents) plus
    LANG, LC_ALL, LC_CTYPE, TMPDIR, TMP and TEMP, so API keys and other secrets
    of the parent never leak into servers that were not given them. Shell
    functions exported by bash (values starting with ``()``) are left out, as
    the SDK does. The configured ``env`` wins over inherited values.

    Pass the result as ``StdioServerParameters(env=...)``; the SDK merges it over
    its own default list, which this already contains.

    Args:
        resolved: The server, from :func:`resolve_server`.
        environ: The parent environment; defaults to ``os.environ``.
    """
    source = os.environ if environ is None else environ
    inherited = {
        key: source[key]
        for key in (*DEFAULT_INHERITED_ENV_VARS, *_EXTRA_INHERITED)
        if key in source and not source[key].startswith("()")
    }
    return inherited | dict(resolved.env)
