"""One MCP server, as an entry of ``mcpServers`` describes it: a ``StdioServer`` or an ``HttpServer``.

Every field accepts camelCase and snake_case. Values of ``command``, ``args``,
``cwd``, ``url``, ``env``, ``envFile`` and ``headers`` may hold ``${VAR}``, ``${VAR:-default}``
and ``secret://`` references; they stay unresolved here and are resolved at
connect time by ``resolve_server``, so secrets never sit in a config object.
Only their syntax is checked when the config loads.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Final, Literal, Self, TypeAlias, final, get_args
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from .._globs import validate_pattern
from .._names import validate_server_name
from .._secrets._display import mask_url
from .._secrets._expand import has_references
from .._secrets._resolvers import is_secret_reference
from ._model import ConfigModel, base_dir_of, key_spellings
from ._oauth import OAuthConfig
from ._setting_types import DrainSeconds, EnvName, Expandable, HeaderName, Seconds

__all__ = [
    "NO_TRANSPORT",
    "NO_TRANSPORT_MESSAGE",
    "REACHED_AT_URL",
    "SERVER_KEYS",
    "SERVER_TYPES",
    "STARTED_BY_COMMAND",
    "HttpServer",
    "ServerBase",
    "ServerConfig",
    "ServerEntry",
    "StdioServer",
    "TransportKind",
    "transport_of",
]

TransportKind = Literal["stdio", "http", "sse"]
TRANSPORT_KINDS: Final = get_args(TransportKind)

# Far above any listing or ordinary result, far below what would strain the client's memory.
_DEFAULT_MAX_RESULT_BYTES = 10 * 1024 * 1024

# The validation error of an entry with neither ``command`` nor ``url``: a file's loader skips such
# an entry with a warning rather than reporting a problem.
NO_TRANSPORT = "no_transport"
NO_TRANSPORT_MESSAGE = "neither 'command' nor 'url' is set; nothing to connect to"
# What each transport's servers are, for messages that tell them apart.
STARTED_BY_COMMAND = "started by 'command' (stdio)"
REACHED_AT_URL = "reached at 'url' (HTTP)"


class ServerBase(ConfigModel):
    """The settings every MCP server has, whatever its transport (an entry of ``mcpServers``).

    A server is a :class:`StdioServer` (``command``) or an :class:`HttpServer`
    (``url``); :data:`ServerConfig` names either. Which one an entry is, is
    decided once, while it is parsed, by the key it gives: nothing that runs a
    server asks again. Two loads of the same file give equal objects: equality
    compares the type, every field, the name and the config folder, which is how
    a reload tells changed servers (a transport change included) from unchanged ones.

    Attributes:
        name: The key under ``mcpServers``; the tool namespace unless ``tool_prefix`` is set.
        internal_only: Keep the session but hide its tools unless a skill names the server.
        enabled: False keeps the entry but starts no session.
        timeout: Seconds to connect and initialize.
        tool_timeout: Seconds a tool call may take (None: no limit).
        drain_seconds: How long calls in flight may finish when the server is removed or
            replaced (None: the file's top-level ``drainSeconds``, else the application's default).
        max_result_bytes: Largest message the server may send, in bytes (10 MiB by default); a
            bigger tool result is dropped as it arrives and the call ends with an error saying its size.
        restart_on_crash: Connect again, with backoff, when the server exits or drops the connection.
        max_restarts: Restarts allowed within the restart window; past it the server waits in
            state ``error`` until the oldest restart leaves the window, then is started again.
        trust: ``untrusted`` wraps result text in boundary markers.
        tool_prefix: Replaces the server name in tool names.
        include_tools: Globs over the server's own tool names to keep.
        exclude_tools: Globs over the server's own tool names to drop.
        lazy: Connect on first use instead of at boot.
        protocol: ``auto`` negotiates the newest protocol; when the client answers
            sampling or elicitation, which a classic server asks for in the middle
            of a call and 2026-07-28 gives no channel for, an HTTP server also gets
            a handshake-era connection for the calls that need one and a stdio
            server speaks the handshake era (2025-11-25) alone (see
            ``mcp_sessions._connection.connect_mode``). ``legacy`` skips the probe;
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
        pin_tools: What a tool whose definition changed since it was pinned, a tool added after
            the server's first listing, and changed ``instructions`` get: ``hold`` (not listed,
            not callable, not given as instructions, until accepted), ``warn`` (usable, the
            change logged and reported) or ``accept`` (pinned again, silently).
    """

    # The ``type`` values this type takes, what a server of this type is, and what the others are (for messages).
    _kinds: ClassVar[tuple[str, ...]] = ()
    _means: ClassVar[str] = ""
    _other: ClassVar[str] = ""

    name: str = Field(default="", exclude=True)
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
    pin_tools: Literal["hold", "warn", "accept"] = "hold"

    _base_dir: Path = PrivateAttr(default_factory=Path.cwd)

    @model_validator(mode="before")
    @classmethod
    def _refuse_other_transport(cls, data: Any) -> Any:
        # A key of the other transport would be ignored: refused here; a file's loader warns and drops it.
        if isinstance(data, Mapping):
            own = key_spellings(cls)
            foreign = [key for key in data if key in SERVER_KEYS and key not in own]
            if data.get("command") and data.get("url"):
                both = f"a server is {STARTED_BY_COMMAND} or {REACHED_AT_URL}, not both"
                raise ValueError(f"both 'command' and 'url' are set; {both}")
            if foreign:
                raise ValueError(f"{foreign[0]!r} is a setting of servers {cls._other}; this server {cls._means}")
        return data

    @field_validator("transport", mode="before", check_fields=False)
    @classmethod
    def _check_transport(cls, value: Any) -> Any:
        if isinstance(value, str) and value in TRANSPORT_KINDS and value not in cls._kinds:
            raise ValueError(f"type {value!r} is for servers {cls._other}; this server {cls._means}")
        if value is not None and value not in TRANSPORT_KINDS:
            found = repr(value) if isinstance(value, str) else f"{type(value).__name__} {value!r}"
            raise ValueError(f"expected 'stdio', 'http' or 'sse', found {found}")
        return value

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

    @model_validator(mode="after")
    def _remember_base_dir(self, info: ValidationInfo) -> Self:
        self._base_dir = base_dir_of(info)
        return self

    @property
    def base_dir(self) -> Path:
        """The folder relative ``cwd`` and ``secret://file/`` paths resolve against (the config file's)."""
        return self._base_dir

    @property
    def namespace(self) -> str:
        """The part before ``__`` in this server's tool names."""
        return self.tool_prefix or self.name

    def with_name(self, name: str) -> Self:
        """A copy carrying its key as ``name`` (validated).

        Raises:
            InvalidToolName: When ``name`` breaks the server naming rules.
        """
        validate_server_name(name)
        return self.model_copy(update={"name": name})


def _not_empty(value: str) -> str:
    if not value:
        raise ValueError("expected the program to run, found an empty string")
    return value


@final
class StdioServer(ServerBase):
    """A server toolsift starts as a child process and talks to over stdin/stdout (an entry with ``command``).

    Attributes:
        command: Program to spawn.
        args: Its arguments.
        env: Extra environment for the child (on top of a minimal one).
        env_file: A dotenv file read when the child is spawned (``env`` wins over it);
            relative to the config file's folder. Its values never enter the config.
        cwd: Working directory of the child; relative to the config file's folder.
        transport: ``stdio`` or absent (key ``type`` or ``transport``), as other clients write it.
    """

    _kinds: ClassVar[tuple[str, ...]] = ("stdio",)
    _means: ClassVar[str] = f"is {STARTED_BY_COMMAND}"
    _other: ClassVar[str] = REACHED_AT_URL

    command: Annotated[Expandable, AfterValidator(_not_empty)]
    args: tuple[Expandable, ...] = ()
    env: dict[EnvName, Expandable] = Field(default_factory=dict)
    env_file: Expandable | None = None
    cwd: Expandable | None = None
    transport: Literal["stdio"] | None = Field(default=None, validation_alias="type")

    @property
    def transport_kind(self) -> Literal["stdio"]:
        """Always ``stdio``."""
        return "stdio"

    def __repr__(self) -> str:
        # env values may be secrets: show their keys only.
        return (
            f"StdioServer(name={self.name!r}, command={self.command!r}, "
            f"args_count={len(self.args)}, env_keys={sorted(self.env)!r})"
        )

    __str__ = __repr__


@final
class HttpServer(ServerBase):
    """A server toolsift connects to by URL: Streamable HTTP, or the legacy HTTP+SSE (an entry with ``url``).

    Attributes:
        url: The endpoint.
        headers: HTTP headers sent with every request.
        transport: ``http`` (Streamable HTTP, the default) or ``sse`` (key ``type`` or ``transport``).
        auth: OAuth 2.1 sign-in for a server that asks for it (see :class:`OAuthConfig`).
    """

    _kinds: ClassVar[tuple[str, ...]] = ("http", "sse")
    _means: ClassVar[str] = f"is {REACHED_AT_URL}"
    _other: ClassVar[str] = STARTED_BY_COMMAND

    url: Expandable
    headers: dict[HeaderName, Expandable] = Field(default_factory=dict)
    transport: Literal["http", "sse"] | None = Field(default=None, validation_alias="type")
    auth: OAuthConfig | None = None

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        # A url built from references can only be checked once they are resolved.
        if not has_references(value) and not is_secret_reference(value):
            scheme = urlsplit(value).scheme
            if scheme not in ("http", "https"):
                raise ValueError(f"expected an http:// or https:// URL, found scheme {scheme!r}")
        return value

    @property
    def transport_kind(self) -> Literal["http", "sse"]:
        """``sse`` when ``type`` says so, else ``http`` (Streamable HTTP)."""
        return "sse" if self.transport == "sse" else "http"

    def __repr__(self) -> str:
        # header values may be secrets: show their keys only; mask URL credentials.
        return (
            f"HttpServer(name={self.name!r}, transport={self.transport_kind!r}, url={mask_url(self.url)!r}, "
            f"header_keys={sorted(self.headers)!r})"
        )

    __str__ = __repr__


ServerConfig: TypeAlias = StdioServer | HttpServer
"""One MCP server: a :class:`StdioServer` or an :class:`HttpServer`; match on the type to run it."""

SERVER_TYPES: Final[dict[str, type[ServerConfig]]] = {"stdio": StdioServer, "http": HttpServer}

# Every key a server entry may give, of either transport, to its field name.
SERVER_KEYS: Final[dict[str, str]] = {**key_spellings(StdioServer), **key_spellings(HttpServer)}


def transport_of(entry: Mapping[str, Any]) -> Literal["stdio", "http"] | None:
    """Which server type an entry is: ``command`` makes it stdio, else ``url`` http; None without either.

    An empty value counts as absent. ``command`` wins when both are given (a
    file's loader then warns that ``url`` is ignored).
    """
    if entry.get("command"):
        return "stdio"
    return "http" if entry.get("url") else None


def _tag(value: Any) -> str | None:
    if isinstance(value, StdioServer | HttpServer):
        return "stdio" if isinstance(value, StdioServer) else "http"
    return transport_of(value) if isinstance(value, Mapping) else None


# ``ServerConfig`` as a field type: the entry's keys pick the type before any field is validated.
ServerEntry = Annotated[
    Annotated[StdioServer, Tag("stdio")] | Annotated[HttpServer, Tag("http")],
    Discriminator(_tag, custom_error_type=NO_TRANSPORT, custom_error_message=NO_TRANSPORT_MESSAGE),
]
