"""``toolsift mcp add|list|get|remove``: edit the servers of a config file from the command line.

The commands follow ``claude mcp``: ``add NAME -- CMD ARGS`` for a stdio
server, ``add --transport http NAME URL`` for a remote one, ``--env`` and
``--header`` repeatable, ``--scope project`` or ``user`` (the user config).
The project's file is the one toolsift loads there: ``./toolsift.json``, else
the first of ``.mcp.json``, ``.vscode/mcp.json``, ``.cursor/mcp.json``; a new
server goes into it in that client's own format, so the file in use keeps
all its servers and the client that owns it still reads it. Every other key
of the file, and their order, is kept; an entry is checked by the config
model before the file is written; edits are locked and atomic, follow links
and keep the file's mode (see ``_config_file``). ``list`` and ``get`` mask
every secret an entry holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from pydantic import ValidationError

from .._exceptions import ConfigError, InvalidToolName
from .._folders import CONFIG_NAME, PROJECT_CONFIGS, user_config_path
from .._names import validate_server_name
from .._secrets._display import mask_settings
from .._secrets._expand import rewrite_references
from ..config import HttpServer, StdioServer, load_config
from ._app import EXIT, state
from ._config_file import edit_json, read_json
from ._output import Output
from ._trust import trust_store

# Registered on the root app when a command of this module runs (see _app.COMMANDS).
commands = typer.Typer(add_completion=False, rich_markup_mode=None)

__all__ = ["mcp_app"]

mcp_app = typer.Typer(
    name="mcp", help="Add, list, show and remove MCP servers in the project or user config.", no_args_is_help=True
)
commands.add_typer(mcp_app)

SCOPES = ("project", "user")
TRANSPORTS = ("stdio", "http", "sse")
# Where a file keeps its servers: another client's top-level key, else toolsift's own place.
_TOP_LEVEL_KEYS = ("mcpServers", "mcp_servers", "servers")
_URL_KEYS = ("url", "serverUrl", "httpUrl")

ScopeOption = Annotated[
    str | None,
    typer.Option(
        "--scope",
        "-s",
        help="project (the project's config: ./toolsift.json, .mcp.json, .vscode/mcp.json, ...) or user.",
    ),
]


@dataclass(frozen=True)
class _Format:
    """How a file writes a server.

    Attributes:
        servers_at: Where a file without servers gets its table.
        stdio_type: Whether a stdio entry says ``"type": "stdio"`` (VS Code requires it).
        env_variables: Whether ``${NAME}`` is written ``${env:NAME}`` (VS Code's and Cursor's form).
    """

    servers_at: tuple[str, ...] = ("tools", "mcpServers")
    stdio_type: bool = False
    env_variables: bool = False


# Other clients' files, by name or by folder/name; any other file is toolsift's.
_FORMATS = {
    ".mcp.json": _Format(("mcpServers",)),
    "claude_desktop_config.json": _Format(("mcpServers",)),
    ".vscode/mcp.json": _Format(("servers",), stdio_type=True, env_variables=True),
    ".cursor/mcp.json": _Format(("mcpServers",), env_variables=True),
}


def _format(path: Path) -> _Format:
    return _FORMATS.get(f"{path.parent.name}/{path.name}") or _FORMATS.get(path.name) or _Format()


def _scope_file(scope: str) -> Path:
    """The file of a scope; for the project, the one config discovery loads, so that no new file hides it."""
    if scope == "user":
        return user_config_path()
    for name in (CONFIG_NAME, *PROJECT_CONFIGS):
        if (Path.cwd() / name).is_file():
            return Path.cwd() / name
    return Path.cwd() / CONFIG_NAME


def _files(scope: str | None) -> list[tuple[str, Path]]:
    """The files a command works on: the one named with -c, one scope's, or both scopes'."""
    if scope is not None and scope not in SCOPES:
        raise typer.BadParameter(f"{scope!r} is not one of 'project', 'user'", param_hint="'--scope'")
    if state.config is not None and scope is None:
        return [("file", state.config)]
    return [(name, _scope_file(name)) for name in ((scope,) if scope else SCOPES)]


def _servers(data: dict[str, Any], path: Path, *, create: bool) -> dict[str, Any]:
    """The file's server table, where the file keeps it (made where its format puts it when ``create``)."""
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
    table = data
    for key in _format(path).servers_at:
        table = table.setdefault(key, {})
        if not isinstance(table, dict):
            raise ConfigError(f"{key!r} is not an object, so no server can go in it; it was left as it is", path=path)
    return table


def _in_format(entry: dict[str, Any], path: Path) -> dict[str, Any]:
    """``entry`` (in toolsift's keys) as ``path``'s client writes it."""
    form = _format(path)
    if form.stdio_type and "command" in entry:
        entry = {"type": "stdio", **entry}
    if not form.env_variables:
        return entry

    def env_form(name: str, default: str | None) -> str | None:
        # Upper-case names are environment variables; VS Code's own (${workspaceFolder}) stay as they are.
        if not name.isupper() or not name.replace("_", "").isalnum():
            return None
        return f"${{env:{name}}}" if default is None else f"${{env:{name}:-{default}}}"

    def rewrite(value: Any) -> Any:
        if isinstance(value, str):
            return rewrite_references(value, env_form)
        if isinstance(value, list):
            return [rewrite(item) for item in value]
        if isinstance(value, dict):
            return {key: rewrite(item) for key, item in value.items()}
        return value

    return {key: rewrite(value) for key, value in entry.items()}


# The stdio launch settings `mcp add` writes beside the command, by their option.
LAUNCH_OPTIONS = {"cwd": "--cwd", "envFile": "--env-file"}


def _pairs(values: list[str], separator: str, option: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, found, rest = value.partition(separator)
        if not found or not key.strip():
            example = "KEY=VALUE" if separator == "=" else "'Name: value'"
            raise typer.BadParameter(f"{value!r} is not {example}", param_hint=f"'{option}'")
        pairs[key.strip()] = rest.strip() if separator == ":" else rest
    return pairs


def _entry(
    name: str, transport: str, target: list[str], env: list[str], header: list[str], launch: dict[str, str]
) -> dict[str, Any]:
    """The server's entry in toolsift's keys; ``launch`` holds the stdio-only settings given (``cwd``, ``envFile``)."""
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
        if env:
            entry["env"] = _pairs(env, "=", "--env")
        entry.update(launch)
    else:
        if len(target) != 1 or not target[0].startswith(("http://", "https://")):
            raise typer.BadParameter(
                f"expected one http:// or https:// URL, got {' '.join(target)!r}", param_hint="'URL'"
            )
        for option, given in (("--env", bool(env)), *((LAUNCH_OPTIONS[key], True) for key in launch)):
            if given:
                raise typer.BadParameter(f"{option} goes with --transport stdio", param_hint=f"'{option}'")
        entry = {"type": transport, "url": target[0]}
        if header:
            entry["headers"] = _pairs(header, ":", "--header")
    try:
        (StdioServer if transport == "stdio" else HttpServer).model_validate(entry)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"] if part != "[key]")
        message = first["msg"].removeprefix("Value error, ")
        raise typer.BadParameter(f"{where}: {message}", param_hint=f"server {name!r}") from None
    return entry


@mcp_app.command("add")
def add(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The server's name (its tools are NAME__tool).")],
    command_or_url: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="COMMAND_OR_URL", help="stdio: the command and its arguments after --; http/sse: the URL."
        ),
    ] = None,
    transport: Annotated[str, typer.Option("--transport", "-t", help="stdio, http or sse.")] = "stdio",
    env: Annotated[list[str] | None, typer.Option("--env", "-e", help="KEY=VALUE for the server (repeatable).")] = None,
    header: Annotated[list[str] | None, typer.Option("--header", "-H", help="'Name: value' (repeatable).")] = None,
    cwd: Annotated[
        str | None, typer.Option("--cwd", help="stdio: the folder it runs in (relative: to the config's folder).")
    ] = None,
    env_file: Annotated[
        str | None, typer.Option("--env-file", help="stdio: a dotenv file read when it starts (--env wins over it).")
    ] = None,
    scope: ScopeOption = None,
    global_: Annotated[
        bool,
        typer.Option("--global", help="Show its tools in every turn (internalOnly: false), not only through skills."),
    ] = False,
) -> None:
    """Add a server: `toolsift mcp add NAME -- CMD ARGS`, or `toolsift mcp add -t http NAME URL`.

    The person who runs it wrote the entry, so its launch is trusted for the
    project's file as it is written (the rest of the file stays as trusted).
    """
    launch = {key: value for key, value in (("cwd", cwd), ("envFile", env_file)) if value is not None}
    entry = _entry(name, transport, list(command_or_url or []), list(env or []), list(header or []), launch)
    if global_:
        entry["internalOnly"] = False
    [(where, path)] = _files(scope or ("project" if state.config is None else None))
    with edit_json(path) as data:
        servers = _servers(data, path, create=True)
        if name in servers:
            raise typer.BadParameter(
                f"{path} already has a server {name!r}; 'toolsift mcp remove {name}' first", param_hint="'NAME'"
            )
        servers[name] = _in_format(entry, path)
    out = Output()
    out.line(f"Added {transport} server {name!r} to {path} ({where})")
    if where == "project":
        _trust_added(out, path, name)
    if not global_:
        out.note(
            f"{name!r} is internal: the model reaches its tools through a skill whose allowed-tools names "
            f"'{name}__*', or a search; add it with --global to show them in every turn"
        )


def _trust_added(out: Output, path: Path, name: str) -> None:
    """Remember the added server's launch as trusted for the project file, as the file now resolves it."""
    try:
        server = load_config(path, lenient=True).servers.get(name)
    except ConfigError as exc:
        server, why = None, str(exc)
    else:
        why = "its entry does not load"
    if server is None:
        # The entry is written; the next run that uses the file asks about it.
        out.note(f"{name!r} is not trusted yet ({why}); 'toolsift check' says more")
        return
    trust_store().remember_launch(path, server)


@mcp_app.command("list")
def list_servers() -> None:
    """Every server of the project and user configs, without starting any; secrets masked."""
    out = Output()
    rows = []
    for where, path in _files(None):
        for name, entry in _servers(read_json(path), path, create=False).items():
            if isinstance(entry, dict):
                rows.append(
                    (
                        name,
                        where,
                        _transport(entry),
                        _target(mask_settings(entry)),
                        "no" if entry.get("enabled") is False or entry.get("disabled") is True else "yes",
                    )
                )
    if not rows:
        out.note("No servers configured; add one with 'toolsift mcp add NAME -- CMD ARGS'")
        return
    out.table("MCP servers", ["server", "scope", "transport", "command or URL", "enabled"], rows)


def _transport(entry: dict[str, Any]) -> str:
    kind = entry.get("type") or entry.get("transport")
    return str(kind) if kind else ("http" if any(entry.get(key) for key in _URL_KEYS) else "stdio")


def _target(entry: dict[str, Any]) -> str:
    url = next((entry[key] for key in _URL_KEYS if entry.get(key)), None)
    if url is not None:
        return str(url)
    args = entry.get("args", [])
    return " ".join(str(part) for part in [entry.get("command", ""), *(args if isinstance(args, list) else [])]).strip()


def _found(name: str, scope: str | None) -> list[tuple[str, Path, dict[str, Any]]]:
    found = [
        (where, path, data)
        for where, path in _files(scope)
        for data in [read_json(path)]
        if name in _servers(data, path, create=False)
    ]
    if not found:
        _no_server(name, {n for _, path in _files(scope) for n in _servers(read_json(path), path, create=False)})
    return found


def _no_server(name: str, known: set[str]) -> NoReturn:
    Output().error(f"no server {name!r}; configured: {', '.join(sorted(known)) if known else 'none'}")
    raise typer.Exit(EXIT["refused"])


@mcp_app.command("get")
def get(name: Annotated[str, typer.Argument(help="The server's name.")], scope: ScopeOption = None) -> None:
    """One server's entry, every secret masked: literal env and header values, secrets in arguments and URLs."""
    out = Output()
    for where, path, data in _found(name, scope):
        entry = _servers(data, path, create=False)[name]
        out.line(f"{name} ({where}: {path})")
        if isinstance(entry, dict):
            out.json(mask_settings(entry))
        else:
            out.error(f"{name!r} in {path} is not an object of settings; 'toolsift check' says more")


@mcp_app.command("remove")
def remove(name: Annotated[str, typer.Argument(help="The server's name.")], scope: ScopeOption = None) -> None:
    """Remove a server; with it in both the project and user config, --scope says which."""
    found = _found(name, scope)
    if len(found) > 1:
        raise typer.BadParameter(
            f"{name!r} is in both the project and the user config; pass --scope", param_hint="'--scope'"
        )
    [(where, path, _)] = found
    with edit_json(path) as data:
        servers = _servers(data, path, create=False)
        if name not in servers:  # another edit removed it since
            _no_server(name, set(servers))
        del servers[name]
    Output().line(f"Removed {name!r} from {path} ({where})")
