"""``ServeSettings``: how ``toolsift serve`` serves, as the ``serve`` section of ``toolsift.json``.

Every key accepts camelCase and snake_case; relative paths resolve against
the config file's folder. Example::

    "serve": {
      "transport": "http", "port": 8765, "token": "${TOOLSIFT_TOKEN}",
      "profile": "ci", "gateway": "code-review",
      "commands": {"allowedPrograms": ["git", "ls"], "timeout": 20},
      "argumentPolicies": {"write_file": {"path": {"denied": ["*.env", ".git/*"]}}},
      "urls": {"deniedHosts": ["169.254.169.254", "*.internal"]}
    }

``token`` may be written as ``${VAR}`` (or ``${VAR:-default}``), expanded from
the environment when the settings load; it is kept as a secret that never
shows in reprs or messages.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator, model_validator

from .._exceptions import ConfigError
from .._globs import compile_patterns
from .._secrets._expand import expand_variables, has_references
from ._commands import CommandSettings
from ._errors import format_field, validation_problems
from ._model import BASE_DIR, ConfigModel, resolve_path
from ._policies import ArgumentRule, UrlPolicy

__all__ = ["ServeSettings", "SharedSettings", "validate_serve_settings"]

DEFAULT_PORT = 8765
MiB = 1024 * 1024
Bytes = Annotated[int, Field(gt=0)]


def _expanded(value: object, field: str) -> object:
    """A secret setting with its ``${VAR}`` references expanded from the environment."""
    if isinstance(value, str) and has_references(value):
        return expand_variables(value, os.environ, field=field)
    return value


class SharedSettings(ConfigModel):
    """``serve.shared``: state that several gateway replicas share in Redis.

    Attributes:
        redis: The Redis URL (``redis://[:password@]host:6379/0``, ``rediss://``
            for TLS); ``${VAR}`` references are expanded, and the URL is kept
            as a secret, since it may hold a password.
        key_prefix: Prefix of every key and channel, so gateways serving
            different configs can share one Redis.
        replica: This replica's name in Redis and in audit records; default:
            ``<hostname>-<pid>``.
        lease_seconds: How long a replica that stopped answering counts as
            alive; a call it was running is reported lost after that.
        session_idle_seconds: A session no request used for this long ends,
            on every replica and in Redis.
        max_batch_messages: The most JSON-RPC messages one POST body of a
            session may carry (answers and cancellations, which every replica
            serving the session reads); a larger batch is refused with 413.
    """

    redis: SecretStr
    key_prefix: str = Field(default="toolsift", pattern=r"^[A-Za-z0-9_.:-]+$")
    replica: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]+$")
    lease_seconds: float = Field(default=10.0, gt=0)
    session_idle_seconds: float = Field(default=1800.0, gt=0)
    max_batch_messages: int = Field(default=100, ge=1)

    @field_validator("redis", mode="before")
    @classmethod
    def _expand(cls, value: object) -> object:
        return _expanded(value, "serve.shared.redis")

    @field_validator("redis")
    @classmethod
    def _scheme(cls, value: SecretStr) -> SecretStr:
        scheme = value.get_secret_value().partition("://")[0]
        if scheme not in ("redis", "rediss", "unix"):
            raise ValueError("expected a URL starting with redis://, rediss:// or unix://")
        return value


class ServeSettings(ConfigModel):
    """The ``serve`` section.

    Attributes:
        workspace: The folder builtin tools work in; default: the config's ``workspace``.
        transport: ``stdio`` or ``http`` (Streamable HTTP).
        host: Address to bind for HTTP; anything but loopback needs a ``token``.
        port: TCP port for HTTP; 0 picks a free one.
        path: The MCP endpoint's path.
        token: Bearer token every HTTP request must carry; None: no token.
        allowed_origins: Browser origins allowed besides loopback ones
            (``https://app.example.com``, or ``http://host:*`` for any port).
        stateless: Serve HTTP without sessions, so that several workers behind a
            load balancer can serve one config.
        json_response: Answer HTTP requests with JSON instead of an SSE stream.
        workers: uvicorn worker processes for HTTP (more than one needs
            ``stateless`` or ``shared``).
        shared: Share sessions, resumable streams, unlocked tools and audit
            records in Redis, so that several replicas (processes or machines)
            behind a load balancer serve one session; None: one process.
        approval_folder: A folder where the approvals servers acted on are
            recorded (one file each), shared by every server of this machine
            that holds the same ``$TOOLSIFT_REQUEST_STATE_KEY``, so that one
            yes runs one call; ``shared`` keeps them in Redis instead.
        max_request_bytes: Largest HTTP request body (larger: 413).
        max_argument_bytes: Largest arguments of one call, as JSON.
        max_result_bytes: Largest result of one call.
        commands: What ``exec_shell`` (and tools named in ``command_arguments``) may run, and
            its sandbox's network and budgets.
        command_arguments: Which argument of which tools (by glob) holds a command line.
        argument_policies: Per tool glob, per argument name, allowed/denied value patterns.
        urls: Which hosts URLs in arguments may name.
        untrusted_tools: Globs of builtin tools whose results are fenced as untrusted
            (MCP servers' results are fenced by their own ``trust`` setting).
        profile: The agent profile the server runs as; default: the ``default`` agent.
        profiles: Other agent profiles served over HTTP at ``<path>/agents/<name>``, each
            with its own allowlist, permissions and plan mode; none by default, since a
            profile broader than ``profile`` widens what a client may do.
        gateway: Also serve MCP tools of configured servers: ``true`` (every tool
            the profile sees), a skill name (that skill's allowed-tools), or a
            list of tool globs.
        prefix_names: Name gateway tools and prompts ``<server>__<name>``; false
            keeps a server's own names wherever no other served tool (or
            prompt) has that name, so a gateway in front of one server is
            transparent. Colliding names keep the prefix.
        fence_gateway_results: Fence gateway results for a model (untrusted
            markers, error headers) as a Toolbox does; by default they pass to
            the client unchanged.
        builtins: Serve the builtin tools (``builtin__*``).
        skills: Serve each user-invocable skill as a ``skill__<name>`` tool.
        watch_skills: Follow edits of skill files while serving.
    """

    workspace: Path | None = None
    transport: Literal["stdio", "http"] = "stdio"
    host: str = "127.0.0.1"
    port: int = Field(default=DEFAULT_PORT, ge=0, le=65535)
    path: str = "/mcp"
    token: SecretStr | None = None
    allowed_origins: tuple[str, ...] = ()
    stateless: bool = False
    json_response: bool = False
    workers: int = Field(default=1, ge=1)
    shared: SharedSettings | None = None
    approval_folder: Path | None = None
    max_request_bytes: Bytes = 4 * MiB
    max_argument_bytes: Bytes = 1 * MiB
    max_result_bytes: Bytes = 1 * MiB
    commands: CommandSettings = CommandSettings()
    command_arguments: dict[str, str] = Field(default_factory=lambda: {"exec_shell": "command"})
    argument_policies: dict[str, dict[str, ArgumentRule]] = Field(default_factory=dict)
    urls: UrlPolicy = UrlPolicy()
    untrusted_tools: tuple[str, ...] = ("read_file", "exec_shell")
    profile: str | None = None
    profiles: tuple[str, ...] = ()
    gateway: bool | str | tuple[str, ...] = False
    prefix_names: bool = True
    fence_gateway_results: bool = False
    builtins: bool = True
    skills: bool = True
    watch_skills: bool = True

    @field_validator("workspace", "approval_folder")
    @classmethod
    def _resolve(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        return None if value is None else resolve_path(value, info)

    @field_validator("token", mode="before")
    @classmethod
    def _expand(cls, value: object) -> object:
        return _expanded(value, "serve.token")

    @field_validator("token")
    @classmethod
    def _non_empty(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().strip():
            raise ValueError("the token is empty; remove it or set a value")
        return value

    @field_validator("path")
    @classmethod
    def _slash(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError(f"expected a path starting with '/', found {value!r}")
        return value

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for origin in value:
            if "://" not in origin or origin.endswith("/"):
                raise ValueError(f"origin {origin!r} must look like scheme://host[:port] with no path")
        return value

    @field_validator("command_arguments", "argument_policies", "untrusted_tools")
    @classmethod
    def _tool_globs(cls, value: Mapping[str, object] | tuple[str, ...], info: ValidationInfo) -> object:
        compile_patterns(tuple(value), where=f"serve.{info.field_name}")
        return value

    @field_validator("gateway")
    @classmethod
    def _gateway(cls, value: bool | str | tuple[str, ...]) -> bool | str | tuple[str, ...]:
        if isinstance(value, tuple):
            if not value:
                raise ValueError("an empty list of gateway patterns serves nothing; use false")
            compile_patterns(value, where="serve.gateway")
        elif isinstance(value, str) and not value:
            raise ValueError("expected true, false, a skill name or a list of tool globs, found ''")
        return value

    @model_validator(mode="after")
    def _workers_need_stateless(self) -> ServeSettings:
        if self.workers > 1 and not self.stateless and self.shared is None:
            # Sessions live in one process; a second worker would not know them.
            raise ValueError(f"workers = {self.workers} needs stateless = true, or shared sessions (serve.shared)")
        if self.shared is not None and self.approval_folder is not None:
            raise ValueError("approvalFolder is for servers without shared: shared replicas record approvals in Redis")
        if self.shared is not None and self.stateless:
            raise ValueError("shared and stateless exclude each other: stateless serving keeps no session to share")
        if self.shared is not None and self.shared.replica is not None and self.workers > 1:
            raise ValueError(
                "each worker is a replica with a name of its own: leave shared.replica unset "
                "(each takes <hostname>-<pid>) or run one worker per named replica"
            )
        return self

    def __repr__(self) -> str:
        return (
            f"ServeSettings(transport={self.transport!r}, host={self.host!r}, port={self.port!r}, "
            f"token={'set' if self.token else None}, profile={self.profile!r}, gateway={self.gateway!r})"
        )

    __str__ = __repr__


def validate_serve_settings(data: object, *, path: Path | None = None) -> ServeSettings:
    """Validate a ``serve`` section; relative paths resolve against ``path``'s folder.

    Raises:
        ConfigError: Listing every invalid field as ``serve.<field>``.
    """
    base_dir = path.parent if path is not None else Path.cwd()
    try:
        return ServeSettings.model_validate(data, context={BASE_DIR: base_dir})
    except ValidationError as exc:
        problems = validation_problems(exc, ServeSettings)
        reason = "; ".join(f"{format_field(('serve', *loc))}: {message}" for loc, message in problems)
        raise ConfigError(reason, path=path) from None
