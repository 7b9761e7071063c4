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

Files may be toolsift's own shape (``tools.mcpServers``) or a bare
``mcpServers`` file (Claude Desktop's ``claude_desktop_config.json``, a project
``.mcp.json``). Other top-level keys of a bare file belong to the program that
owns it: they are ignored with a warning.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, final

from pydantic import BaseModel, ValidationError

from .._exceptions import ConfigError, InvalidToolName, SecretError
from ..registry import validate_server_name
from ._config import ServerConfig
from ._errors import format_field, validation_problems
from ._json_lines import JsonLines, Loc
from ._lint import server_warnings
from ._model import BASE_DIR, key_spellings
from ._secrets import resolve_server
from ._toolsift_config import ToolsConfig, ToolsiftConfig

__all__ = ["ConfigReport", "ConfigWarning", "load_config", "parse_config", "validate_config"]

logger = logging.getLogger("toolsift.config")

_SERVER_KEYS = ("mcpServers", "mcp_servers")


@final
@dataclass(frozen=True)
class ConfigWarning:
    """Something valid but doubtful in a config file; it never stops a load.

    Attributes:
        message: What was found and what to do; never a setting's value.
        path: The config file, when there is one.
        field: Dotted field path as written (``tools.mcpServers.git.env.API_KEY``).
        line: 1-based line, where it can be known.
        server: The server concerned, if any.
    """

    message: str
    path: Path | None = None
    field: str | None = None
    line: int | None = None
    server: str | None = None

    def __str__(self) -> str:
        # The same shape as a ConfigError's message: "file:line: field: message".
        parts = [] if self.path is None else [f"{self.path}:{self.line}" if self.line is not None else str(self.path)]
        return ": ".join([*parts, *([self.field] if self.field else []), self.message])


@final
@dataclass(frozen=True)
class ConfigReport:
    """The outcome of checking one config: the usable config, problems and warnings.

    Attributes:
        config: The config without the servers that had problems, or None when
            a problem outside the servers makes the file unusable.
        problems: Every problem found, in file order where known.
        warnings: Every warning (already logged on ``toolsift.config``).
        skipped: Servers left out of ``config`` because of a problem.
        path: The file checked, if any.
    """

    config: ToolsiftConfig | None
    problems: tuple[ConfigError, ...] = ()
    warnings: tuple[ConfigWarning, ...] = ()
    skipped: tuple[str, ...] = ()
    path: Path | None = None

    @property
    def ok(self) -> bool:
        """True when the file loaded with no problem at all."""
        return self.config is not None and not self.problems

    def error(self) -> ConfigError:
        """One ``ConfigError`` for all problems: the problem itself when there is one.

        Raises:
            ValueError: When there is no problem to report.
        """
        if not self.problems:
            raise ValueError("The config has no problems to report")
        if len(self.problems) == 1:
            return self.problems[0]
        listing = "\n".join(f"  {_located(p)}" for p in self.problems)
        return ConfigError(f"{len(self.problems)} problems:\n{listing}", path=self.path)

    def raise_for_problems(self) -> ToolsiftConfig:
        """Return the config when there is no problem, else raise :meth:`error`."""
        if self.config is None or self.problems:
            raise self.error()
        return self.config


def _located(problem: ConfigError) -> str:
    line = f"line {problem.line}: " if problem.line is not None else ""
    return f"{line}{problem.field + ': ' if problem.field else ''}{problem.reason}"


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

    def invalid(self, exc: ValidationError, model: type[BaseModel], prefix: Loc) -> None:
        for loc, reason in validation_problems(exc, model):
            self.problem((*prefix, *loc), reason)

    def warn(self, loc: Loc, message: str, *, server: str | None = None, line: int | None = None) -> None:
        line = self.lines.line_of(loc) if line is None else line
        warning = ConfigWarning(message, self.path, format_field(loc) or None, line, server)
        logger.warning("%s", warning)
        self.warnings.append(warning)


def _split_servers(data: dict[str, Any], check: _Checker) -> tuple[dict[str, Any], Loc, Any] | None:
    """Take the servers out of ``data``: (the rest, where they were, the servers), or None on a problem."""
    rest = dict(data)
    containers: list[tuple[Loc, dict[str, Any]]] = [((), rest)]
    if isinstance(rest.get("tools"), dict):
        rest["tools"] = dict(rest["tools"])
        containers.append((("tools",), rest["tools"]))
    found = [(where, container, key) for where, container in containers for key in _SERVER_KEYS if key in container]
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
        _drop_foreign_keys(rest, check)
    return rest, (*where, key), servers


def _drop_foreign_keys(rest: dict[str, Any], check: _Checker) -> None:
    known = key_spellings(ToolsiftConfig)
    for key in [k for k in rest if k not in known]:
        del rest[key]
        check.warn((key,), f"ignored: {key!r} is not a toolsift setting (this file is read for its 'mcpServers')")


def _spelling(entry: Mapping[str, Any]) -> Callable[[str], str]:
    """A function from field name to the key this entry uses for it (camelCase when absent)."""
    spellings = key_spellings(ServerConfig)

    def spell(field: str) -> str:
        written = [key for key in entry if spellings.get(key) == field]
        return written[0] if written else (ServerConfig.model_fields[field].alias or field)

    return spell


def _check_servers(
    servers: Mapping[str, Any], prefix: Loc, check: _Checker, context: dict[str, Any]
) -> tuple[dict[str, ServerConfig], list[str]]:
    good: dict[str, ServerConfig] = {}
    skipped: list[str] = []
    namespaces: dict[str, str] = {}
    for name, entry in servers.items():
        loc = (*prefix, name)
        before = len(check.problems)
        try:
            validate_server_name(name)
        except InvalidToolName as exc:
            check.problem(loc, f"bad server name: {exc.reason}")
        if not isinstance(entry, dict):
            check.problem(loc, "expected an object of server settings")
            skipped.append(name)
            continue
        try:
            validated: ServerConfig | None = ServerConfig.model_validate(entry, context=context)
        except ValidationError as exc:
            check.invalid(exc, ServerConfig, loc)
            validated = None
        if validated is None or len(check.problems) > before:
            skipped.append(name)
            continue
        config = validated.with_name(name)
        spell = _spelling(entry)
        for where, message in server_warnings(config, spell):
            check.warn((*loc, *where), message, server=name)
        if config.transport_kind is None:
            check.warn(loc, f"server {name!r} has neither 'command' nor 'url'; skipped", server=name)
            continue
        owner = namespaces.setdefault(config.namespace, name)
        if owner != name:
            where = (*loc, spell("tool_prefix")) if config.tool_prefix else loc
            check.problem(where, f"tool namespace {config.namespace!r} is already used by server {owner!r}")
            skipped.append(name)
            continue
        good[name] = config
    return good, skipped


def _field_loc(field: str) -> Loc:
    """``env.API_KEY`` -> ``('env', 'API_KEY')``; ``args[2]`` -> ``('args', 2)``; ``url`` -> ``('url',)``."""
    head, _, key = field.partition(".")
    if key:
        return (head, key)
    name, _, index = head.partition("[")
    return (name, int(index.rstrip("]"))) if index else (name,)


def _check_references(
    servers: dict[str, ServerConfig], prefix: Loc, check: _Checker, environ: Mapping[str, str] | None
) -> list[str]:
    failed: list[str] = []
    for name, server in servers.items():
        try:
            resolve_server(server, environ=environ)
        except SecretError as exc:
            check.problem((*prefix, name, *_field_loc(exc.field or "")), str(exc))
            failed.append(name)
    for name in failed:
        del servers[name]
    return failed


def _check(
    source: str | Mapping[str, Any],
    path: Path | None,
    *,
    resolve_references: bool = False,
    environ: Mapping[str, str] | None = None,
) -> ConfigReport:
    base_dir = path.parent if path is not None else Path.cwd()
    check = _Checker(path, JsonLines())
    if isinstance(source, str):
        try:
            data = json.loads(source)
        except json.JSONDecodeError as exc:
            check.problem((), f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno)
            return ConfigReport(None, tuple(check.problems), path=path)
        check.lines = JsonLines.scan(source)
        for loc, line in check.lines.duplicates:
            check.warn(loc, "this key is given more than once; the last one is used", line=line)
    else:
        data = dict(source)
    if not isinstance(data, dict):
        check.problem((), f"expected a JSON object at the top level, found {type(data).__name__}", line=1)
        return ConfigReport(None, tuple(check.problems), tuple(check.warnings), path=path)
    split = _split_servers(data, check)
    context = {BASE_DIR: base_dir}
    config: ToolsiftConfig | None = None
    good: dict[str, ServerConfig] = {}
    skipped: list[str] = []
    if split is not None:
        rest, servers_loc, servers = split
        try:
            config = ToolsiftConfig.model_validate(rest, context=context)
        except ValidationError as exc:
            check.invalid(exc, ToolsiftConfig, ())
        if isinstance(servers, dict):
            good, skipped = _check_servers(servers, servers_loc, check, context)
            if resolve_references:
                skipped += _check_references(good, servers_loc, check, environ)
        else:
            check.problem(servers_loc, "expected an object mapping server names to their settings")
            config = None
    if config is not None:
        tools: ToolsConfig = config.tools.model_copy(update={"mcp_servers": good})
        config = config.model_copy(update={"tools": tools, "path": path})
    problems = sorted(check.problems, key=lambda p: p.line or 0)
    return ConfigReport(config, tuple(problems), tuple(check.warnings), tuple(skipped), path)


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
        path: The JSON file (toolsift's shape or a bare ``mcpServers`` file).
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
        path: The JSON file (toolsift's shape or a bare ``mcpServers`` file).
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
    if not lenient or report.config is None:
        return report.raise_for_problems()
    for problem in report.problems:
        logger.error("server skipped: %s", problem)
    return report.config
