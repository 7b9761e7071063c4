"""Warnings about valid but doubtful settings: server entries, and permission globs that match no tool.

None of these stops a load: the transport conflicts follow a fixed rule
(command wins), and a plaintext credential works, it just should not sit in a
file that gets copied, committed and shared. Messages name the field, never
its value. A permission glob that matches no tool is harmless to load but
does nothing, which for a ``denylist`` or ``ask`` rule is a hole: it is
reported by ``toolsift check`` and when a toolbox or a server starts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

from ..registry import SERVED_BUILTIN_NAMESPACE, ToolRegistry, compile_patterns, literal_server
from ._json_lines import Loc
from ._report import ConfigWarning
from ._server import ServerConfig
from ._toolsift import ToolsiftConfig
from .secrets import has_references, is_secret_reference

__all__ = ["looks_like_credential", "permission_glob_warnings", "server_warnings"]

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
    for field in ("env", "headers"):
        for key, value in getattr(config, field).items():
            if looks_like_credential(key) and _plaintext(value):
                found.append(((spell(field), key), f"{key!r} looks like a credential written in plaintext; {_ADVICE}"))
    for index, arg in enumerate(config.args):
        flag, sep, value = arg.partition("=")
        previous = config.args[index - 1] if index else ""
        if sep and flag.startswith("-") and looks_like_credential(flag) and _plaintext(value):
            found.append(((spell("args"), index), f"argument {flag!r} carries a plaintext credential; {_ADVICE}"))
        elif _is_credential_flag(previous) and not arg.startswith("-") and _plaintext(arg):
            found.append(((spell("args"), index), f"the value of {previous!r} is a plaintext credential; {_ADVICE}"))
    if config.url and _plaintext(config.url):
        parts = urlsplit(config.url)
        keys = [key for key, _ in parse_qsl(parts.query) if looks_like_credential(key)]
        if parts.password or keys:
            what = "a password" if parts.password else f"query parameter {keys[0]!r}"
            found.append(((spell("url"),), f"the URL holds {what} in plaintext; {_ADVICE}"))
    return found


def _transport_warnings(config: ServerConfig, spell: Callable[[str], str]) -> list[tuple[Loc, str]]:
    kind = config.transport_kind
    declared = config.transport
    if kind == "stdio" and config.url:
        return [((spell("url"),), "both 'command' and 'url' are set; the server runs over stdio and 'url' is ignored")]
    if kind == "stdio" and declared in ("http", "sse"):
        message = f"type {declared!r} is ignored: 'command' is set, so the server runs over stdio"
        return [((spell("transport"),), message)]
    if kind in ("http", "sse") and declared == "stdio":
        return [((spell("transport"),), "type 'stdio' needs a 'command'; connecting to 'url' over Streamable HTTP")]
    return []


def server_warnings(config: ServerConfig, spell: Callable[[str], str]) -> list[tuple[Loc, str]]:
    """Warnings for one valid server, as (location inside its entry, message).

    Args:
        config: The server.
        spell: Maps a field name to the key the user wrote for it (``toolPrefix``
            or ``tool_prefix``), so locations match the file.
    """
    return _transport_warnings(config, spell) + _credential_warnings(config, spell)


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
