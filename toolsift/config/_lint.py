"""Warnings about valid but doubtful settings: server entries, and permission globs that match no tool.

None of these stops a load: the transport conflicts follow a fixed rule
(command wins; the other transport's settings are dropped), and a plaintext
credential works, it just should not sit in a file that gets copied, committed
and shared. Messages name the field, never
its value. A permission glob that matches no tool is harmless to load but
does nothing, which for a ``denylist`` or ``ask`` rule is a hole: it is
reported by ``toolsift check`` and when a toolbox or a server starts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from .._globs import compile_patterns, literal_server
from .._names import SERVED_BUILTIN_NAMESPACE
from .._secrets._expand import has_references
from .._secrets._resolvers import is_secret_reference
from ..registry import ToolRegistry
from ._json_lines import Loc
from ._report import ConfigWarning
from ._server import (
    REACHED_AT_URL,
    SERVER_KEYS,
    SERVER_TYPES,
    STARTED_BY_COMMAND,
    HttpServer,
    ServerConfig,
    StdioServer,
)
from ._toolsift import ToolsiftConfig

__all__ = ["looks_like_credential", "permission_glob_warnings", "server_warnings", "transport_conflicts"]

# Key names that usually hold credentials (env vars, header names, query keys, CLI flags).
_CREDENTIAL = re.compile(
    r"pass(word|wd|phrase)|pwd|secret|token|api[-_]?key|apikey|access[-_]?key|private[-_]?key"
    r"|credential|auth|cookie|(^|[-_])key$",
    re.IGNORECASE,
)
# Values under such keys that are clearly switches, not credentials (USE_TOKEN_CACHE=true).
_HARMLESS = re.compile(r"true|false|yes|no|on|off|none|\d+", re.IGNORECASE)
_ADVICE = "move it to an environment variable (${NAME}) or a secret (secret://env/NAME, secret://file/PATH)"


def looks_like_credential(key: str) -> bool:
    """Return True when a key name suggests its value is a credential."""
    return _CREDENTIAL.search(key) is not None


def _is_credential_flag(arg: str) -> bool:
    """``--token`` or ``--api-key``: a flag whose value is the next argument."""
    return arg.startswith("-") and "=" not in arg and looks_like_credential(arg)


def _plaintext(value: str) -> bool:
    return (
        bool(value)
        and not has_references(value)
        and not is_secret_reference(value)
        and not (_HARMLESS.fullmatch(value))
    )


def _credential_warnings(config: ServerConfig, spell: Callable[[str], str]) -> list[tuple[Loc, str]]:
    found: list[tuple[Loc, str]] = []
    match config:
        case StdioServer():
            field, pairs, args = "env", config.env, config.args
        case HttpServer():
            field, pairs, args = "headers", config.headers, ()
    for key, value in pairs.items():
        if looks_like_credential(key) and _plaintext(value):
            found.append(((spell(field), key), f"{key!r} looks like a credential written in plaintext; {_ADVICE}"))
    for index, arg in enumerate(args):
        flag, sep, value = arg.partition("=")
        previous = args[index - 1] if index else ""
        if sep and flag.startswith("-") and looks_like_credential(flag) and _plaintext(value):
            found.append(((spell("args"), index), f"argument {flag!r} carries a plaintext credential; {_ADVICE}"))
        elif _is_credential_flag(previous) and not arg.startswith("-") and _plaintext(arg):
            found.append(((spell("args"), index), f"the value of {previous!r} is a plaintext credential; {_ADVICE}"))
    if isinstance(config, HttpServer) and _plaintext(config.url):
        parts = urlsplit(config.url)
        keys = [key for key, _ in parse_qsl(parts.query) if looks_like_credential(key)]
        if parts.password or keys:
            what = "a password" if parts.password else f"query parameter {keys[0]!r}"
            found.append(((spell("url"),), f"the URL holds {what} in plaintext; {_ADVICE}"))
    return found


def _ignored(key: str, value: Any, kind: Literal["stdio", "http"]) -> str | None:
    """Why a key of an entry of transport ``kind`` is ignored, or None when the entry's type reads it."""
    field = SERVER_KEYS.get(key)
    if field == "transport":
        if kind == "stdio" and value in ("http", "sse"):
            return f"type {value!r} is ignored: 'command' is set, so the server runs over stdio"
        if kind == "http" and value == "stdio":
            return "type 'stdio' needs a 'command'; connecting to 'url' over Streamable HTTP"
        return None
    if field is None or field in SERVER_TYPES[kind].model_fields or field == "auth":
        return None  # unknown keys, and auth without a url, are problems: validation reports them
    if field == "url":
        return "both 'command' and 'url' are set; the server runs over stdio and 'url' is ignored"
    if kind == "stdio":
        return f"{key!r} is ignored: it is a setting of servers {REACHED_AT_URL}, and this one is {STARTED_BY_COMMAND}"
    return f"{key!r} is ignored: it is a setting of servers {STARTED_BY_COMMAND}, and this one is {REACHED_AT_URL}"


def transport_conflicts(
    entry: Mapping[str, Any], kind: Literal["stdio", "http"]
) -> tuple[dict[str, Any], list[tuple[Loc, str]]]:
    """The entry without the keys its transport ignores, and a warning for each of them that says something.

    An entry picks its transport by ``command`` or ``url`` (see
    ``transport_of``); the other transport's settings, and a ``type`` that
    contradicts it, would be ignored, so they are dropped here. An empty value
    is dropped without a word, as it asks for nothing, and so is the ``type``
    of an ignored ``url``: the url's warning covers it. A file's loader uses
    this; a server built directly refuses such keys.
    """
    kept: dict[str, Any] = {}
    notes: list[tuple[Loc, str]] = []
    url_ignored = kind == "stdio" and bool(entry.get("url"))
    for key, value in entry.items():
        reason = _ignored(key, value, kind)
        if reason is None:
            kept[key] = value
        elif value and not (url_ignored and SERVER_KEYS.get(key) == "transport"):
            notes.append(((key,), reason))
    return kept, notes


def server_warnings(config: ServerConfig, spell: Callable[[str], str]) -> list[tuple[Loc, str]]:
    """Warnings for one valid server, as (location inside its entry, message).

    Args:
        config: The server.
        spell: Maps a field name to the key the user wrote for it (``toolPrefix``
            or ``tool_prefix``), so locations match the file.
    """
    return [*_credential_warnings(config, spell), *_lazy_global(config, spell)]


def _lazy_global(config: ServerConfig, spell: Callable[[str], str]) -> list[tuple[Loc, str]]:
    """A global server that is lazy: its tools are meant for every turn, but nothing a turn does starts it.

    A tool search or a skill naming it (``<name>__...``) starts a lazy server; starting it for
    every turn a global server's tools are listed in (every turn) would make ``lazy`` mean nothing.
    """
    if not (config.lazy and config.enabled and not config.internal_only):
        return []
    return [
        (
            (spell("lazy"),),
            "a lazy global server (internalOnly: false) is in no turn's tool list until a tool search or a "
            f"skill naming it ({config.namespace}__...) starts it; remove lazy to list its tools from the start, "
            "or set internalOnly: true so that its tools are found by search and skills alone",
        )
    ]


@dataclass(frozen=True)
class _Glob:
    """One tool-name glob of a rule, where it is written, and whether it sees every name of a tool."""

    field: str
    glob: str
    every_name: bool  # rules match a tool by any of its names; allowedTools (layer 3) by its canonical name


def _globs(config: ToolsiftConfig, agents: Iterable[str]) -> Iterator[_Glob]:
    for index, rule in enumerate(config.tools.permissions):
        yield _Glob(f"tools.permissions[{index}].match", rule.match, True)
    for name in agents:
        agent = config.agents.get(name)
        if agent is None:  # the built-in default profile has no globs
            continue
        where = f"agents.{name}"
        for key, globs in (
            ("denylist", agent.permissions.denylist),
            ("allowlist", agent.permissions.allowlist or ()),
            ("ask", agent.permissions.ask),
        ):
            yield from (_Glob(f"{where}.permissions.{key}", glob, True) for glob in globs)
        yield from (_Glob(f"{where}.allowedTools", glob, False) for glob in agent.allowed_tools or ())


def _reached(glob: _Glob, unlisted: list[ServerConfig], *, upstream: bool) -> list[str]:
    """The servers, of those whose tools are not known, that ``glob`` may name tools of."""
    server = literal_server(glob.glob)
    if server is not None:
        return [config.name for config in unlisted if server in (config.name, config.namespace)]
    # A wildcard may stand for any server's name; a bare name may be a tool's own, served unprefixed.
    if "*" in glob.glob or "?" in glob.glob or (upstream and glob.every_name):
        return [config.name for config in unlisted]
    return []


def permission_glob_warnings(
    config: ToolsiftConfig,
    registry: ToolRegistry,
    *,
    agents: Iterable[str] | None = None,
    upstream: bool = False,
    app_tools: bool = False,
) -> tuple[list[ConfigWarning], set[str]]:
    """Permission globs that match no tool of ``registry``, and the servers whose tools could not be checked.

    A rule glob (``denylist``, ``allowlist``, ``ask``, ``tools.permissions``)
    is tried on every name of every tool (``ToolRegistry.names``), an
    ``allowedTools`` glob on canonical names. A server with no tool in
    ``registry`` (not connected yet, lazy, failed, or never connected, as in
    ``toolsift check``) is unknown: globs that may name its tools are not
    judged, and it is returned so that the caller can say so.

    Args:
        config: The config whose globs are checked.
        registry: The catalogue to check them against.
        agents: The agent profiles in use (all of the config's by default).
        upstream: Tools may be known by their own server's name (a gateway
            with ``prefixNames: false``): a bare glob may name a tool of a
            server whose tools are not known. ``registry`` gives the names of
            those that are (``ToolRegistry(upstream_names=...)``).
        app_tools: The application may register bare-named tools of its own
            at any time (a Toolbox): globs that may name one are not judged.
    """
    # The names the checks themselves match by, canonical first, so that the two cannot differ.
    known = [registry.names(tool.spec.name) for tool in registry]
    unlisted = [
        server for server in config.servers.values() if server.enabled and not registry.tools(server=server.namespace)
    ]
    warnings: list[ConfigWarning] = []
    unchecked: set[str] = set()
    for glob in _globs(config, config.agents if agents is None else agents):
        patterns = compile_patterns([glob.glob])
        if any(patterns.matches(name) for names in known for name in (names if glob.every_name else names[:1])):
            continue
        reached = _reached(glob, unlisted, upstream=upstream)
        if reached:
            unchecked.update(reached)
            continue
        if app_tools and literal_server(glob.glob) in (None, SERVED_BUILTIN_NAMESPACE):
            continue
        what = "rule" if glob.every_name else "allowedTools entry"
        how = (
            "rules match a tool by its canonical name (read_file, github__create_issue), its served name "
            "(builtin__read_file), its server's key under a toolPrefix, and its provider aliases"
            if glob.every_name
            else "allowedTools match canonical names (read_file, github__create_issue)"
        )
        warnings.append(
            ConfigWarning(
                f"{what} {glob.glob!r} matches no tool, so it has no effect; {how}", path=config.path, field=glob.field
            )
        )
    return warnings, unchecked
