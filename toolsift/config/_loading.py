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
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from .._exceptions import ConfigError, InvalidToolName, SecretError
from .._names import validate_server_name
from ._dialects import (
    Dialect,
    FileSettings,
    Places,
    UnclosedComment,
    detect_dialect,
    project_folder,
    read_file_keys,
    strip_jsonc,
    translate_entry,
)
from ._errors import format_field, validation_problems
from ._json_lines import MAX_DEPTH, JsonLines, Loc, too_deep
from ._lint import server_warnings, transport_conflicts
from ._model import BASE_DIR, key_spellings
from ._report import ConfigReport, ConfigWarning, located
from ._resolve import resolve_server
from ._server import SERVER_KEYS, SERVER_TYPES, ServerBase, ServerConfig, StdioServer, transport_of
from ._toolsift import ToolsConfig, ToolsiftConfig

__all__ = ["load_config", "parse_config", "validate_config"]

logger = logging.getLogger("toolsift.config")

_SERVER_KEYS = ("mcpServers", "mcp_servers")
Written = Callable[[Loc], Loc]


def _as_written(loc: Loc) -> Loc:
    return loc


class _Checker:
    """Collects the problems and warnings of one file."""

    def __init__(self, path: Path | None, lines: JsonLines) -> None:
        self.path = path
        self.lines = lines
        self.problems: list[ConfigError] = []
        self.warnings: list[ConfigWarning] = []

    def problem(self, loc: Loc, reason: str, *, line: int | None = None) -> None:
        line = self.lines.line_of(loc) if line is None else line
        self.problems.append(ConfigError(reason, path=self.path, field=format_field(loc) or None, line=line))

    def invalid(
        self, exc: ValidationError, model: type[BaseModel], prefix: Loc, written: Written = _as_written
    ) -> None:
        for loc, reason in validation_problems(exc, model):
            self.problem((*prefix, *written(loc)), reason)

    def warn(self, loc: Loc, message: str, *, server: str | None = None, line: int | None = None) -> None:
        line = self.lines.line_of(loc) if line is None else line
        warning = ConfigWarning(message, self.path, format_field(loc) or None, line, server)
        logger.warning("%s", warning)
        self.warnings.append(warning)


@dataclass(frozen=True)
class _File:
    """What the servers of one file are read with: its dialect, its top-level settings, its folders."""

    dialect: Dialect
    settings: FileSettings
    places: Places


def _decode(source: str | Mapping[str, Any], check: _Checker) -> dict[str, Any] | None:
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


def _split_servers(data: dict[str, Any], check: _Checker, dialect: Dialect) -> tuple[dict[str, Any], Loc, Any] | None:
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


def _drop_foreign_keys(rest: dict[str, Any], check: _Checker, servers_key: str) -> None:
    known = key_spellings(ToolsiftConfig)
    for key in [k for k in rest if k not in known]:
        del rest[key]
        check.warn((key,), f"ignored: {key!r} is not a toolsift setting (this file is read for its {servers_key!r})")


def _spelling(entry: Mapping[str, Any]) -> Callable[[str], str]:
    """A function from field name to the key this entry uses for it (camelCase when absent)."""

    def spell(field: str) -> str:
        written = [key for key in entry if SERVER_KEYS.get(key) == field]
        return written[0] if written else to_camel(field)

    return spell


def _kept_without_transport(key: str) -> bool:
    """Whether a key of an entry without a transport is checked: unknown keys and the settings of every server."""
    field = SERVER_KEYS.get(key)
    return field is None or field in ServerBase.model_fields


class _Servers:
    """The servers of one file as they are checked: the good ones, and why each other one was left out."""

    def __init__(self, prefix: Loc, check: _Checker) -> None:
        self.prefix = prefix
        self.check = check
        self.good: dict[str, ServerConfig] = {}
        self.skipped: list[str] = []
        self.dropped: dict[str, str] = {}
        self.written: dict[str, Written] = {}

    def skip(self, name: str, first_problem: int) -> None:
        """Leave ``name`` out because of the problems reported from index ``first_problem`` on."""
        self.good.pop(name, None)
        self.skipped.append(name)
        self.dropped[name] = located(self.check.problems[first_problem])

    def add_all(self, servers: Mapping[str, Any], context: dict[str, Any], file: _File) -> None:
        namespaces: dict[str, str] = {}
        for name, entry in servers.items():
            config = self._one(name, entry, context, file)
            if config is None:
                continue
            owner = namespaces.setdefault(config.namespace, name)
            if owner != name:
                loc = (*self.prefix, name)
                before = len(self.check.problems)
                where = (*loc, _spelling(entry)("tool_prefix")) if config.tool_prefix else loc
                self.check.problem(where, f"tool namespace {config.namespace!r} is already used by server {owner!r}")
                self.skip(name, before)
                continue
            self.good[name] = config

    def _one(self, name: str, entry: Any, context: dict[str, Any], file: _File) -> ServerConfig | None:
        check = self.check
        loc = (*self.prefix, name)
        before = len(check.problems)
        try:
            validate_server_name(name)
        except InvalidToolName as exc:
            check.problem(loc, f"bad server name: {exc.reason}")
        if not isinstance(entry, dict):
            check.problem(loc, "expected an object of server settings")
            self.skip(name, before)
            return None
        translation = translate_entry(entry, file.dialect, file.places, disabled=file.settings.disables(name))
        written = self.written[name] = translation.written
        for where, message in translation.notes:
            check.warn((*loc, *where), message, server=name)
        kind = transport_of(translation.entry)
        if kind is None:
            self._without_transport(name, translation.entry, context, written, before)
            return None
        # The type is picked by the entry's keys; what only the other transport reads is dropped, with a warning.
        entry, ignored = transport_conflicts(translation.entry, kind)
        model = SERVER_TYPES[kind]
        try:
            validated: ServerConfig | None = model.model_validate(entry, context=context)
        except ValidationError as exc:
            check.invalid(exc, model, loc, written)
            validated = None
        if validated is None or len(check.problems) > before:
            self.skip(name, before)
            return None
        config = validated.with_name(name)
        for where, message in [*ignored, *server_warnings(config, _spelling(entry))]:
            check.warn((*loc, *written(where)), message, server=name)
        return config

    def _without_transport(
        self, name: str, entry: Mapping[str, Any], context: dict[str, Any], written: Written, before: int
    ) -> None:
        """An entry with neither ``command`` nor ``url``: skipped with a warning, unless it has other problems.

        Its unknown keys and the settings every server has are checked, against
        a stdio server's keys, so that a misspelt ``command`` is still reported
        with its close match rather than skipped.
        """
        loc = (*self.prefix, name)
        rest = {key: value for key, value in entry.items() if _kept_without_transport(key)}
        try:
            StdioServer.model_validate(rest, context=context)
        except ValidationError as exc:
            for where, reason in validation_problems(exc, StdioServer):
                if where != ("command",):
                    self.check.problem((*loc, *written(where)), reason)
        if len(self.check.problems) > before:
            self.skip(name, before)
            return
        self.check.warn(loc, f"server {name!r} has neither 'command' nor 'url'; skipped", server=name)
        self.dropped[name] = "neither 'command' nor 'url' is set"

    def check_references(self, environ: Mapping[str, str] | None) -> None:
        """Resolve every good server's references now; leave out the ones that fail."""
        for name, server in list(self.good.items()):
            try:
                resolve_server(server, environ=environ)
            except SecretError as exc:
                before = len(self.check.problems)
                self.check.problem((*self.prefix, name, *self.written[name](_field_loc(exc.field or ""))), str(exc))
                self.skip(name, before)


def _field_loc(field: str) -> Loc:
    """``env.API_KEY`` -> ``('env', 'API_KEY')``; ``args[2]`` -> ``('args', 2)``; ``url`` -> ``('url',)``."""
    head, _, key = field.partition(".")
    if key:
        return (head, key)
    name, _, index = head.partition("[")
    return (name, int(index.rstrip("]"))) if index else (name,)


def _check(
    source: str | Mapping[str, Any],
    path: Path | None,
    *,
    resolve_references: bool = False,
    environ: Mapping[str, str] | None = None,
) -> ConfigReport:
    check = _Checker(path, JsonLines())
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
    file = _File(dialect, settings, Places(base_dir, folder, inputs=settings.inputs))
    context = {BASE_DIR: base_dir}
    config: ToolsiftConfig | None = None
    servers = _Servers(("tools", "mcpServers"), check)
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
