"""Reading config files: every problem with its field and line, and bad servers left out.

Two outcomes, by design:

- **Strict** (``load_config(path)``, ``parse_config(...)``): any problem raises
  one ``ConfigError``. ``toolsift check`` and tests want this.
- **Lenient** (``load_config(path, lenient=True)``, or ``validate_config`` and its
  ``ConfigReport``): a server with a problem (bad name, unknown key, negative
  timeout, namespace clash...) is left out and reported, and the other servers
  load; the bootstrap wants this, so one bad server never stops the others.
  A problem anywhere else (agents, permissions, skills, broken JSON) still
  fails the load: leaving out a broken permission rule or agent limit would
  silently grant more than the file asks for.

Files may be toolsift's own shape (``tools.mcpServers``) or another MCP
client's file, read as it is: Claude Desktop's and Claude Code's bare
``mcpServers``, VS Code's ``servers``, Cursor, Windsurf, Cline, Gemini CLI,
FastMCP (see ``_dialects``: which client wrote the file, and how its keys and
variables translate). Comments and trailing commas are accepted in any file.
Other top-level keys of a client's file belong to that client: they are
ignored with a warning.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .._exceptions import ConfigError
from ._dialects import (
    Dialect,
    Places,
    UnclosedComment,
    detect_dialect,
    project_folder,
    read_file_keys,
    strip_jsonc,
)
from ._errors import format_field
from ._json_lines import MAX_DEPTH, JsonLines, Loc, too_deep
from ._model import BASE_DIR, key_spellings
from ._report import Checker, ConfigReport
from ._server_entries import FileContext, ServerEntries
from ._toolsift import ToolsConfig, ToolsiftConfig

__all__ = ["load_config", "parse_config", "validate_config"]

_SERVER_KEYS = ("mcpServers", "mcp_servers")


def _decode(source: str | Mapping[str, Any], check: Checker) -> dict[str, Any] | None:
    """The top-level object of ``source``, or None after reporting why there is none."""
    if isinstance(source, str):
        try:
            text = strip_jsonc(source)
        except UnclosedComment as exc:
            check.problem((), f"invalid JSON: {exc}", line=exc.line)
            return None
        deep_line = too_deep(text)
        if deep_line is not None:
            check.problem(
                (), f"nested more than {MAX_DEPTH} levels deep; a config file needs far fewer", line=deep_line
            )
            return None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            check.problem((), f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno)
            return None
        check.lines = JsonLines.scan(text)
        for loc, line in check.lines.duplicates:
            check.warn(loc, "this key is given more than once; the last one is used", line=line)
    else:
        data = dict(source)
    if not isinstance(data, dict):
        check.problem((), f"expected a JSON object at the top level, found {type(data).__name__}", line=1)
        return None
    return data


def _split_servers(data: dict[str, Any], check: Checker, dialect: Dialect) -> tuple[dict[str, Any], Loc, Any] | None:
    """Take the servers out of ``data``: (the rest, where they were, the servers), or None on a problem."""
    rest = dict(data)
    top_keys = tuple(dict.fromkeys((dialect.servers_key, *_SERVER_KEYS)))
    containers: list[tuple[Loc, dict[str, Any], tuple[str, ...]]] = [((), rest, top_keys)]
    if isinstance(rest.get("tools"), dict):
        rest["tools"] = dict(rest["tools"])
        containers.append((("tools",), rest["tools"], _SERVER_KEYS))
    found = [(where, container, key) for where, container, keys in containers for key in keys if key in container]
    if len(found) > 1:
        first = format_field((*found[0][0], found[0][2]))
        for where, _, key in found[1:]:
            check.problem((*where, key), f"servers are already given under {first!r}; give them once")
        return None
    if not found:
        return rest, ("tools", "mcpServers"), {}
    where, container, key = found[0]
    servers = container.pop(key)
    if not where and "tools" not in rest:
        _drop_foreign_keys(rest, check, key)
    return rest, (*where, key), servers


def _drop_foreign_keys(rest: dict[str, Any], check: Checker, servers_key: str) -> None:
    known = key_spellings(ToolsiftConfig)
    for key in [k for k in rest if k not in known]:
        del rest[key]
        check.warn((key,), f"ignored: {key!r} is not a toolsift setting (this file is read for its {servers_key!r})")


def _check(
    source: str | Mapping[str, Any],
    path: Path | None,
    *,
    resolve_references: bool = False,
    environ: Mapping[str, str] | None = None,
) -> ConfigReport:
    check = Checker(path, JsonLines())
    data = _decode(source, check)
    if data is None:
        return ConfigReport(None, tuple(check.problems), tuple(check.warnings), path=path)
    dialect = detect_dialect(path, data)
    data = dict(data)
    settings, notes = read_file_keys(data, dialect)
    for where, message in notes:
        check.warn(where, message)
    folder = path.parent if path is not None else Path.cwd()
    # A client's file inside .vscode/ (etc.) speaks of the project that holds it.
    base_dir = project_folder(path) if path is not None and dialect.translate else folder
    file = FileContext(dialect, settings, Places(base_dir, folder, inputs=settings.inputs))
    context = {BASE_DIR: base_dir}
    config: ToolsiftConfig | None = None
    servers = ServerEntries(("tools", "mcpServers"), check)
    split = _split_servers(data, check, dialect)
    if split is not None:
        rest, servers.prefix, found = split
        try:
            config = ToolsiftConfig.model_validate(rest, context=context)
        except ValidationError as exc:
            check.invalid(exc, ToolsiftConfig, ())
        if isinstance(found, dict):
            servers.add_all(found, context, file)
            if resolve_references:
                servers.check_references(environ)
        else:
            check.problem(servers.prefix, "expected an object mapping server names to their settings")
            config = None
    if config is not None:
        tools: ToolsConfig = config.tools.model_copy(update={"mcp_servers": servers.good})
        config = config.model_copy(update={"tools": tools, "path": path})
    problems = sorted(check.problems, key=lambda p: p.line or 0)
    return ConfigReport(
        config, tuple(problems), tuple(check.warnings), tuple(servers.skipped), path, servers.dropped, dialect.name
    )


def _read(path: Path) -> str:
    try:
        # utf-8-sig: editors on Windows save JSON with a byte-order mark.
        return path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read the config file: {exc.strerror or exc}", path=path) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"the config file is not UTF-8 text ({exc.reason} at byte {exc.start})", path=path) from None


def validate_config(
    path: str | Path,
    *,
    resolve_references: bool = False,
    environ: Mapping[str, str] | None = None,
) -> ConfigReport:
    """Check a config file and report every problem and warning; never raises for content.

    Servers with problems are left out of ``report.config`` and named in
    ``report.skipped``; a problem elsewhere leaves ``report.config`` None.
    Warnings are logged on ``toolsift.config`` as they are found.

    Args:
        path: The JSON file: toolsift's shape, or another MCP client's file as it is.
        resolve_references: Also resolve every server's ``${VAR}`` and
            ``secret://`` references now (``toolsift check``) and report the
            ones that fail; the values are dropped right away.
        environ: Where references look when ``resolve_references`` is set;
            defaults to ``os.environ``.

    Raises:
        ConfigError: Only when the file cannot be read at all.
    """
    file = Path(path).absolute()
    return _check(_read(file), file, resolve_references=resolve_references, environ=environ)


def load_config(path: str | Path, *, lenient: bool = False) -> ToolsiftConfig:
    """Load a config file.

    Args:
        path: The JSON file: toolsift's shape, or another MCP client's file as it is.
        lenient: Leave out servers that have problems (each is logged on
            ``toolsift.config`` at ERROR) instead of failing.

    Raises:
        ConfigError: On any problem (strict), or on a problem outside the
            servers (lenient). With several problems the message lists them all.
    """
    report = validate_config(path)
    return _outcome(report, lenient)


def parse_config(
    source: str | Mapping[str, Any], path: str | Path | None = None, *, lenient: bool = False
) -> ToolsiftConfig:
    """Parse config text or an already-decoded dict, as :func:`load_config` does a file.

    Args:
        source: JSON text, or the decoded object.
        path: Where it came from: names the file in messages and anchors
            relative paths (default: the current directory).
        lenient: As for :func:`load_config`.

    Raises:
        ConfigError: As for :func:`load_config`.
    """
    file = None if path is None else Path(path).absolute()
    return _outcome(_check(source, file), lenient)


def _outcome(report: ConfigReport, lenient: bool) -> ToolsiftConfig:
    return report.usable() if lenient else report.raise_for_problems()
