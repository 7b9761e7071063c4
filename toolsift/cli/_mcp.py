"""``toolsift mcp add|list|get|remove``: edit the servers of a config file from the command line.

The commands follow ``claude mcp``: ``add NAME -- CMD ARGS`` for a stdio
server, ``add --transport http NAME URL`` for a remote one, ``--env`` and
``--header`` repeatable, ``--scope project`` (``./toolsift.json``, or
``./.mcp.json`` when that is the project's file) or ``user`` (the user
config). Every other key of the file, and their order, is kept; an entry is
checked by the config model before the file is written, and the file is
replaced in one step, so it is never left half written or invalid.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from .._exceptions import ConfigError, InvalidToolName
from ..config import ServerConfig
from ..config.secrets import has_references, is_secret_reference
from ..registry import validate_server_name
from ..toolbox import CONFIG_NAME, user_config_path
from ._app import EXIT, app, state
from ._output import Output

__all__ = ["mcp_app"]

mcp_app = typer.Typer(name="mcp", help="Add, list, show and remove MCP servers in the project or user config.",
                      no_args_is_help=True)
app.add_typer(mcp_app)

SCOPES = ("project", "user")
TRANSPORTS = ("stdio", "http", "sse")
# Where a file keeps its servers: another client's top-level key, else toolsift's own place.
_TOP_LEVEL_KEYS = ("mcpServers", "mcp_servers", "servers")
_OWN_PLACE = ("tools", "mcpServers")

ScopeOption = Annotated[str | None, typer.Option("--scope", "-s", help="project (./toolsift.json) or user.")]


def _scope_file(scope: str) -> Path:
    if scope == "user":
        return user_config_path()
    project = Path.cwd()
    mcp_json = project / ".mcp.json"
    if not (project / CONFIG_NAME).is_file() and mcp_json.is_file():
        return mcp_json  # the project's own file: a new toolsift.json would hide it
    return project / CONFIG_NAME


def _files(scope: str | None) -> list[tuple[str, Path]]:
    """The files a command works on: the one named with -c, one scope's, or both scopes'."""
    if scope is not None and scope not in SCOPES:
        raise typer.BadParameter(f"{scope!r} is not one of 'project', 'user'", param_hint="'--scope'")
    if state.config is not None and scope is None:
        return [("file", state.config)]
    return [(name, _scope_file(name)) for name in ((scope,) if scope else SCOPES)]


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not plain JSON ({exc.msg}); fix it or edit it by hand, it was left as it is",
                          path=path, line=exc.lineno) from None
    if not isinstance(data, dict):
        raise ConfigError("expected a JSON object at the top; it was left as it is", path=path)
    return data


def _servers(data: dict[str, Any], *, create: bool) -> dict[str, Any]:
    """The file's server table, where the file keeps it (made in toolsift's place when ``create``)."""
    for key in _TOP_LEVEL_KEYS:
        if isinstance(data.get(key), dict):
            return data[key]  # type: ignore[no-any-return]
    tools = data.get("tools")
    if isinstance(tools, dict):
        for key in ("mcpServers", "mcp_servers"):
            if isinstance(tools.get(key), dict):
                return tools[key]  # type: ignore[no-any-return]
    if not create:
        return {}
    return data.setdefault(_OWN_PLACE[0], {}).setdefault(_OWN_PLACE[1], {})  # type: ignore[no-any-return]


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _pairs(values: list[str], separator: str, option: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, found, rest = value.partition(separator)
        if not found or not key.strip():
            example = "KEY=VALUE" if separator == "=" else "'Name: value'"
            raise typer.BadParameter(f"{value!r} is not {example}", param_hint=f"'{option}'")
        pairs[key.strip()] = rest.strip() if separator == ":" else rest
    return pairs


def _entry(name: str, transport: str, target: list[str], env: list[str], header: list[str]) -> dict[str, Any]:
    if transport not in TRANSPORTS:
        raise typer.BadParameter(f"{transport!r} is not one of 'stdio', 'http', 'sse'", param_hint="'--transport'")
    try:
        validate_server_name(name)
    except InvalidToolName as exc:
        raise typer.BadParameter(str(exc), param_hint="'NAME'") from None
    if not target:
        what = "the command after --" if transport == "stdio" else "the server's URL"
        raise typer.BadParameter(f"missing {what}", param_hint="'COMMAND_OR_URL'")
    entry: dict[str, Any]
    if transport == "stdio":
        if header:
            raise typer.BadParameter("headers go with --transport http or sse", param_hint="'--header'")
        entry = {"command": target[0], "args": target[1:]} if target[1:] else {"command": target[0]}
    else:
        if len(target) != 1 or not target[0].startswith(("http://", "https://")):
            raise typer.BadParameter(f"expected one http:// or https:// URL, got {' '.join(target)!r}",
                                     param_hint="'URL'")
        entry = {"type": transport, "url": target[0]}
        if header:
            entry["headers"] = _pairs(header, ":", "--header")
    if env:
        entry["env"] = _pairs(env, "=", "--env")
    try:
        ServerConfig.model_validate(entry)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"] if part != "[key]")
        message = first["msg"].removeprefix("Value error, ")
        raise typer.BadParameter(f"{where}: {message}", param_hint=f"server {name!r}") from None
    return entry


@mcp_app.command("add")
def add(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The server's name (its tools are NAME__tool).")],
    command_or_url: Annotated[list[str] | None, typer.Argument(
        metavar="COMMAND_OR_URL", help="stdio: the command and its arguments after --; http/sse: the URL.")] = None,
    transport: Annotated[str, typer.Option("--transport", "-t", help="stdio, http or sse.")] = "stdio",
    env: Annotated[list[str] | None, typer.Option("--env", "-e", help="KEY=VALUE for the server (repeatable).")]
    = None,
    header: Annotated[list[str] | None, typer.Option("--header", "-H", help="'Name: value' (repeatable).")] = None,
    scope: ScopeOption = None,
) -> None:
    """Add a server: `toolsift mcp add NAME -- CMD ARGS`, or `toolsift mcp add -t http NAME URL`."""
    entry = _entry(name, transport, list(command_or_url or []), list(env or []), list(header or []))
    [(where, path)] = _files(scope or ("project" if state.config is None else None))
    data = _read(path)
    servers = _servers(data, create=True)
    if name in servers:
        raise typer.BadParameter(f"{path} already has a server {name!r}; 'toolsift mcp remove {name}' first",
                                 param_hint="'NAME'")
    servers[name] = entry
    _write(path, data)
    Output().line(f"Added {transport} server {name!r} to {path} ({where})")


@mcp_app.command("list")
def list_servers() -> None:
    """Every server of the project and user configs, without starting any."""
    out = Output()
    rows = []
    for where, path in _files(None):
        for name, entry in _servers(_read(path), create=False).items():
            if isinstance(entry, dict):
                rows.append((name, where, _transport(entry), _target(entry),
                             "no" if entry.get("enabled") is False or entry.get("disabled") is True else "yes"))
    if not rows:
        out.note("No servers configured; add one with 'toolsift mcp add NAME -- CMD ARGS'")
        return
    out.table("MCP servers", ["server", "scope", "transport", "command or URL", "enabled"], rows)


def _transport(entry: dict[str, Any]) -> str:
    kind = entry.get("type") or entry.get("transport")
    return str(kind) if kind else ("http" if entry.get("url") else "stdio")


def _target(entry: dict[str, Any]) -> str:
    if entry.get("url"):
        return str(entry["url"])
    return " ".join(str(part) for part in [entry.get("command", ""), *entry.get("args", [])]).strip()


def _masked(values: Any) -> Any:
    # A reference names where the secret lives, so it is safe to show; a literal value is not.
    if not isinstance(values, dict):
        return values
    return {key: value if isinstance(value, str) and (has_references(value) or is_secret_reference(value))
            else "***" for key, value in values.items()}


def _found(name: str, scope: str | None) -> list[tuple[str, Path, dict[str, Any]]]:
    found = [(where, path, data) for where, path in _files(scope)
             for data in [_read(path)] if name in _servers(data, create=False)]
    if not found:
        known = sorted({n for _, path in _files(scope) for n in _servers(_read(path), create=False)})
        Output().error(f"no server {name!r}; configured: {', '.join(known) if known else 'none'}")
        raise typer.Exit(EXIT["refused"])
    return found


@mcp_app.command("get")
def get(name: Annotated[str, typer.Argument(help="The server's name.")], scope: ScopeOption = None) -> None:
    """One server's entry; env and header values are masked unless they are ${VAR} or secret:// references."""
    out = Output()
    for where, path, data in _found(name, scope):
        entry = dict(_servers(data, create=False)[name])
        for key in ("env", "headers"):
            if key in entry:
                entry[key] = _masked(entry[key])
        out.line(f"{name} ({where}: {path})")
        out.json(entry)


@mcp_app.command("remove")
def remove(name: Annotated[str, typer.Argument(help="The server's name.")], scope: ScopeOption = None) -> None:
    """Remove a server; with it in both the project and user config, --scope says which."""
    found = _found(name, scope)
    if len(found) > 1:
        raise typer.BadParameter(f"{name!r} is in both the project and the user config; pass --scope",
                                 param_hint="'--scope'")
    [(where, path, data)] = found
    del _servers(data, create=False)[name]
    _write(path, data)
    Output().line(f"Removed {name!r} from {path} ({where})")
