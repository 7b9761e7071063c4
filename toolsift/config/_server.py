"""``ServerConfig``: one MCP server, as an entry of ``mcpServers`` describes it.

Every field accepts camelCase and snake_case. Values of ``command``, ``args``,
``cwd``, ``url``, ``env``, ``envFile`` and ``headers`` may hold ``${VAR}``, ``${VAR:-default}``
and ``secret://`` references; they stay unresolved here and are resolved at
connect time by ``resolve_server``, so secrets never sit in a config object.
Only their syntax is checked when the config loads.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, PrivateAttr, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from ..registry import validate_pattern, validate_server_name
from ._model import ConfigModel, base_dir_of
from .secrets import has_references, is_secret_reference, mask_url, parse_secret_reference, reference_problem

__all__ = ["NO_TRANSPORT", "ServerConfig", "TransportKind"]

TransportKind = Literal["stdio", "http", "sse"]

# Far above any listing or ordinary result, far below what would strain the client's memory.
_DEFAULT_MAX_RESULT_BYTES = 10 * 1024 * 1024

_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")

# The validation error type of an entry with neither ``command`` nor ``url``: a file's loader skips such
# an entry with a warning rather than reporting a problem.
NO_TRANSPORT = "no_transport"


def _check_reference(value: str) -> str:
    # Messages never include the value: it may be, or embed, a credential.
    problem = reference_problem(value)
    if problem is not None:
        raise ValueError(problem)
    if is_secret_reference(value):
        parse_secret_reference(value, base_dir=Path())
    return value


def _check_env_name(name: str) -> str:
    if not name or "=" in name or "\0" in name:
        raise ValueError(f"environment variable name {name!r} must be non-empty and hold no '=' or NUL")
    return name


def _check_header_name(name: str) -> str:
    if not _HEADER_NAME.fullmatch(name):
        raise ValueError(f"header name {name!r} is not a valid HTTP field name")
    return name


# A setting that may hold ${VAR}, ${VAR:-default} or a whole-value secret:// reference.
Expandable = Annotated[str, AfterValidator(_check_reference)]
EnvName = Annotated[str, AfterValidator(_check_env_name)]
HeaderName = Annotated[str, AfterValidator(_check_header_name)]
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
# How long a draining session may finish its calls; 0 cancels them at once.
DrainSeconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class OAuthConfig(ConfigModel):
    """How toolsift signs in to an HTTP server that asks for OAuth 2.1 (a server's ``auth``).

    Attributes:
        grant: ``authorization_code`` (a person signs in once in a browser, with
            PKCE; ``toolsift auth login SERVER``) or ``client_credentials`` (a
            service signs in with its own secret or private key, no person).
        client_id: A client registered ahead of time with the authorization
            server (``${VAR}`` or ``secret://`` forms); without one, toolsift
            registers itself (dynamic client registration) or names itself by
            ``client_metadata_url``.
        client_secret: That client's secret (``${VAR}`` or ``secret://`` forms).
        private_key: A PEM private key: with ``client_credentials`` the client
            proves itself by a signed JWT (``private_key_jwt``) instead of a secret.
        signing_algorithm: The JWT's algorithm (``RS256``, ``ES256``, ...).
        scopes: Scopes to ask for; without them, those the server names.
        client_metadata_url: An HTTPS URL of this client's metadata document, used as
            its client ID where the authorization server accepts them.
        redirect_port: The loopback port the browser returns to after signing in.
        token_endpoint_auth_method: How the client authenticates at the token
            endpoint (``client_secret_basic``, ``client_secret_post`` or ``none``);
            by default the one the server supports.
    """

    grant: Literal["authorization_code", "client_credentials"] = "authorization_code"
    client_id: Expandable | None = None
    client_secret: Expandable | None = None
    private_key: Expandable | None = None
    signing_algorithm: str = "RS256"
    scopes: tuple[str, ...] = ()
    client_metadata_url: str | None = None
    redirect_port: int = Field(default=33418, ge=1, le=65535)
    token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post", "none"] | None = None

    @model_validator(mode="after")
    def _check_grant(self) -> OAuthConfig:
        if self.grant == "client_credentials" and (
            self.client_id is None or (self.client_secret is None) == (self.private_key is None)
        ):
            raise ValueError("grant client_credentials needs clientId and one of clientSecret or privateKey")
        if self.private_key is not None and self.grant != "client_credentials":
            raise ValueError("privateKey signs client_credentials requests; set grant: client_credentials")
        return self


class ServerConfig(ConfigModel):
    """One MCP server (an entry of ``tools.mcpServers`` or of a bare ``mcpServers``).

    Two loads of the same file give equal objects: equality compares every
    field, the name and the config folder, which is how a reload tells changed
    servers from unchanged ones. The transport is decided once, here: an
    entry with neither ``command`` nor ``url`` is refused (a file's loader
    skips it with a warning), so every ``ServerConfig`` has one.

    Attributes:
        name: The key under ``mcpServers``; the tool namespace unless ``tool_prefix`` is set.
        command: Program to spawn (stdio transport).
        args: Its arguments.
        env: Extra environment for the child (on top of a minimal one).
        env_file: A dotenv file read when the child is spawned (``env`` wins over it);
            relative to the config file's folder. Its values never enter the config.
        cwd: Working directory of the child; relative to the config file's folder.
        url: Streamable HTTP (or SSE) endpoint.
        headers: HTTP headers sent with every request.
        transport: ``stdio``, ``http`` or ``sse`` (key ``type`` or ``transport``);
            only ``sse`` changes anything: see :attr:`transport_kind`.
        internal_only: Keep the session but hide its tools unless a skill names the server.
        enabled: False keeps the entry but starts no session.
        timeout: Seconds to connect and initialize.
        tool_timeout: Seconds a tool call may take (None: no limit).
        drain_seconds: How long calls in flight may finish when the server is removed or
            replaced (None: the file's top-level ``drainSeconds``, else the application's default).
        max_result_bytes: Largest message the server may send, in bytes (10 MiB by default); a
            bigger tool result is dropped as it arrives and the call ends with an error saying its size.
        restart_on_crash: Restart a crashed stdio server with backoff.
        max_restarts: Restarts allowed within the restart window; past it the server waits in
            state ``error`` until the oldest restart leaves the window, then is started again.
        trust: ``untrusted`` wraps result text in boundary markers.
        tool_prefix: Replaces the server name in tool names.
        include_tools: Globs over the server's own tool names to keep.
        exclude_tools: Globs over the server's own tool names to drop.
        lazy: Connect on first use instead of at boot.
        protocol: ``auto`` negotiates the newest protocol, but speaks the handshake
            era (2025-11-25) when the client answers sampling or elicitation:
            servers ask for those in the middle of a call, which 2026-07-28
            gives a classic server no channel for. ``legacy`` skips the probe;
            ``2026-07-28`` insists on that version.
        always_load: Keep this server's tools in every turn's schema set.
        searchable: False hides an internal server's tools from tool search.
        resources: Put the server's resources into the turn's context.
        instructions: Put the server's instructions (from its handshake) into
            the instructions of every turn that shows one of its tools.
        tasks: Which tools run as MCP tasks (create, follow, fetch the result):
            ``when-required`` only those whose ``execution.taskSupport`` is
            ``required``; ``when-supported`` also those where it is ``optional``.
        resource_filter: Globs over resource URIs; empty keeps them all.
        auth: OAuth 2.1 sign-in for an HTTP server that asks for it (see :class:`OAuthConfig`).
    """

    name: str = Field(default="", exclude=True)
    command: Expandable | None = None
    args: tuple[Expandable, ...] = ()
    env: dict[EnvName, Expandable] = Field(default_factory=dict)
    env_file: Expandable | None = None
    cwd: Expandable | None = None
    url: Expandable | None = None
    headers: dict[HeaderName, Expandable] = Field(default_factory=dict)
    transport: TransportKind | None = Field(default=None, validation_alias="type")
    internal_only: bool = True
    enabled: bool = True
    timeout: Seconds = 30.0
    tool_timeout: Seconds | None = 60.0
    drain_seconds: DrainSeconds | None = None
    max_result_bytes: int = Field(default=_DEFAULT_MAX_RESULT_BYTES, gt=0)
    restart_on_crash: bool = True
    max_restarts: int = Field(default=5, ge=0)
    trust: Literal["untrusted", "trusted"] = "untrusted"
    tool_prefix: str | None = None
    include_tools: tuple[str, ...] = ()
    exclude_tools: tuple[str, ...] = ()
    lazy: bool = False
    protocol: Literal["auto", "legacy", "2026-07-28"] = "auto"
    always_load: bool = False
    searchable: bool = True
    resources: bool = False
    instructions: bool = True
    tasks: Literal["when-required", "when-supported"] = "when-required"
    resource_filter: tuple[str, ...] = ()
    auth: OAuthConfig | None = None

    _base_dir: Path = PrivateAttr(default_factory=Path.cwd)

    @field_validator("tool_prefix")
    @classmethod
    def _check_prefix(cls, value: str | None) -> str | None:
        if value is not None:
            validate_server_name(value, field="toolPrefix")
        return value

    @field_validator("include_tools", "exclude_tools", "resource_filter")
    @classmethod
    def _check_globs(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        for pattern in value:
            validate_pattern(pattern, where=info.field_name)
        return value

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        # A url built from references can only be checked once they are resolved.
        if value and not has_references(value) and not is_secret_reference(value):
            scheme = urlsplit(value).scheme
            if scheme not in ("http", "https"):
                raise ValueError(f"expected an http:// or https:// URL, found scheme {scheme!r}")
        return value

    @model_validator(mode="after")
    def _remember_base_dir(self, info: ValidationInfo) -> ServerConfig:
        self._base_dir = base_dir_of(info)
        if not self.command and not self.url:
            raise PydanticCustomError(NO_TRANSPORT, "neither 'command' nor 'url' is set; nothing to connect to")
        if self.auth is not None and self.command:
            raise ValueError("auth signs in to HTTP servers (url); a server started by command needs none")
        return self

    @property
    def base_dir(self) -> Path:
        """The folder relative ``cwd`` and ``secret://file/`` paths resolve against (the config file's)."""
        return self._base_dir

    @property
    def namespace(self) -> str:
        """The part before ``__`` in this server's tool names."""
        return self.tool_prefix or self.name

    @property
    def transport_kind(self) -> TransportKind:
        """The transport the rule picks: command -> stdio; else url -> http (or sse)."""
        if self.command:
            return "stdio"
        return "sse" if self.transport == "sse" else "http"

    def with_name(self, name: str) -> ServerConfig:
        """A copy carrying its key as ``name`` (validated).

        Raises:
            InvalidToolName: When ``name`` breaks the server naming rules.
        """
        validate_server_name(name)
        return self.model_copy(update={"name": name})

    def __repr__(self) -> str:
        # env and header values may be secrets: show their keys only; mask URL credentials.
        target = self.command or mask_url(self.url or "")
        return (
            f"ServerConfig(name={self.name!r}, transport={self.transport_kind!r}, target={target!r}, "
            f"env_keys={sorted(self.env)!r}, header_keys={sorted(self.headers)!r})"
        )

    __str__ = __repr__
