"""Connect-time resolution: a ``ServerConfig`` with its references replaced by values.

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
from typing import final

from dotenv import dotenv_values
from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

from .._exceptions import SecretError
from .._redaction import MASK
from ._server import ServerConfig, TransportKind
from .secrets import expand_variables, has_references, is_secret_reference, mask_url, resolve_secret

__all__ = ["ResolvedServer", "child_environment", "resolve_server"]

# On top of the SDK's list (HOME, LOGNAME, PATH, SHELL, TERM, USER; the Windows set):
# locale so child programs print UTF-8, and the temp folder they should use.
_EXTRA_INHERITED = ("LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TMP", "TEMP")


@final
@dataclass(frozen=True, repr=False)
class ResolvedServer:
    """What a transport needs to reach one server, with every reference resolved.

    Build it with :func:`resolve_server`. Its repr masks every env and header
    value and every setting that came from a reference, so logging it is safe;
    the attributes themselves hold the real values for the transport.

    Attributes:
        name: The server's name.
        transport: ``stdio``, ``http`` or ``sse``.
        command: Program to spawn (stdio), else None.
        args: Its arguments (stdio).
        env: The configured extra environment (stdio); see :func:`child_environment`.
        cwd: Absolute working directory (stdio), or None to inherit the current one.
        url: Endpoint (http, sse), else None.
        headers: HTTP headers (http, sse).
        auth_secrets: ``auth.clientSecret``, ``auth.privateKey`` and a referenced ``auth.clientId``, resolved
            (http, sse).
    """

    name: str
    transport: TransportKind
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    auth_secrets: Mapping[str, str] = field(default_factory=dict)
    # Fields (``command``, ``args[1]``, ``url``...) whose value came from a reference.
    redacted: frozenset[str] = field(default_factory=frozenset, compare=False)

    def __repr__(self) -> str:
        def shown(name: str, value: str | None) -> str | None:
            return MASK if value is not None and name in self.redacted else value

        args = tuple(shown(f"args[{i}]", arg) for i, arg in enumerate(self.args))
        url = shown("url", self.url)
        parts = [
            f"name={self.name!r}",
            f"transport={self.transport!r}",
            f"command={shown('command', self.command)!r}",
            f"args={args!r}",
            f"env={dict.fromkeys(self.env, MASK)!r}",
            f"cwd={shown('cwd', None if self.cwd is None else str(self.cwd))!r}",
            f"url={url if url in (None, MASK) else mask_url(url)!r}",
            f"headers={dict.fromkeys(self.headers, MASK)!r}",
            f"auth_secrets={dict.fromkeys(self.auth_secrets, MASK)!r}",
        ]
        return f"ResolvedServer({', '.join(parts)})"

    __str__ = __repr__


class _Resolver:
    """Resolves the values of one server, remembering which came from references."""

    def __init__(self, config: ServerConfig, base_dir: Path, environ: Mapping[str, str]) -> None:
        self.config = config
        self.base_dir = base_dir
        self.environ = environ
        self.redacted: set[str] = set()

    def value(self, raw: str, field: str) -> str:
        name = self.config.name
        if is_secret_reference(raw):
            self.redacted.add(field)
            # `${...}` inside a reference is expanded first (secret://file/${HOME}/token);
            # the secret itself is never scanned for references.
            reference = expand_variables(raw, self.environ, server=name, field=field)
            return resolve_secret(reference, base_dir=self.base_dir, environ=self.environ, server=name, field=field)
        if has_references(raw):
            self.redacted.add(field)
        return expand_variables(raw, self.environ, server=name, field=field)

    def mapping(self, values: Mapping[str, str], field: str) -> dict[str, str]:
        return {key: self.value(raw, f"{field}.{key}") for key, raw in values.items()}

    def auth_secrets(self, config: ServerConfig) -> dict[str, str]:
        auth = config.auth
        if auth is None:
            return {}
        given = {"clientSecret": auth.client_secret, "privateKey": auth.private_key}
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
            raise SecretError(str(path), reason, server=self.config.name, field="envFile") from None
        except UnicodeDecodeError:
            raise SecretError(
                str(path), "the env file is not UTF-8 text", server=self.config.name, field="envFile"
            ) from None
        # No interpolation: as in VS Code and Cursor, a value is taken as written.
        values = dotenv_values(stream=io.StringIO(text), interpolate=False)
        return {key: value for key, value in values.items() if value is not None}


def resolve_server(
    config: ServerConfig,
    *,
    base_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> ResolvedServer:
    """Resolve a server's ``${VAR}`` and ``secret://`` references, right before connecting.

    Only the settings of the transport that :attr:`ServerConfig.transport_kind`
    picks are resolved: ``command``, ``args``, ``cwd`` and ``env`` for stdio;
    ``url`` and ``headers`` for http/sse. A stdio server's ``envFile`` is read
    now, its variables under those of ``env``. A reference in a setting the transport
    ignores can therefore never stop a connect. A relative ``cwd`` is made
    absolute against ``base_dir``. This call blocks while it reads secret files
    or runs plug-in resolvers; from async code run it in a worker thread
    (``await anyio.to_thread.run_sync(resolve_server, config)``).

    Args:
        config: The server, as loaded.
        base_dir: Folder for relative ``cwd`` and ``secret://file/`` paths;
            defaults to ``config.base_dir`` (the config file's folder).
        environ: Where ``${VAR}`` and ``secret://env/`` look; defaults to ``os.environ``.

    Returns:
        The resolved settings; its repr masks secrets.

    Raises:
        SecretError: When a reference cannot be resolved; it names the
            reference, ``config.name`` and the field (``env.API_KEY``,
            ``args[2]``), never a value.
    """
    kind = config.transport_kind
    folder = config.base_dir if base_dir is None else base_dir
    resolver = _Resolver(config, folder, os.environ if environ is None else environ)
    if kind != "stdio":
        assert config.url is not None  # transport_kind said so
        return ResolvedServer(
            name=config.name,
            transport=kind,
            url=resolver.value(config.url, "url"),
            headers=resolver.mapping(config.headers, "headers"),
            auth_secrets=resolver.auth_secrets(config),
            redacted=frozenset(resolver.redacted),
        )
    assert config.command is not None  # transport_kind said so
    command = resolver.value(config.command, "command")
    args = tuple(resolver.value(arg, f"args[{i}]") for i, arg in enumerate(config.args))
    cwd = None if config.cwd is None else resolver.path(config.cwd, "cwd")
    from_file = {} if config.env_file is None else resolver.env_file(config.env_file)
    return ResolvedServer(
        name=config.name,
        transport="stdio",
        command=command,
        args=args,
        env=from_file | resolver.mapping(config.env, "env"),
        cwd=cwd,
        redacted=frozenset(resolver.redacted),
    )


def child_environment(resolved: ResolvedServer, *, environ: Mapping[str, str] | None = None) -> dict[str, str]:
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
