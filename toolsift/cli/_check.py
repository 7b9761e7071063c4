"""``check``: validate a config and its skills without starting anything; every problem with its place."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .._assembly import skills_loader
from .._exceptions import ConfigError
from .._folders import find_config
from ..config import ToolsiftConfig, validate_config
from ..config._internal import ConfigReport
from ..mcp_sessions._internal import InstructionsChange, ToolChange, ToolPins
from ._app import EXIT, state
from ._coverage import known_tools, pattern_coverage, rule_coverage
from ._hints import internal_hint
from ._output import JsonOption, Output, reported_here

# Registered on the root app when this command runs (see _app.COMMANDS).
commands = typer.Typer(add_completion=False, rich_markup_mode=None)

Finding = dict[str, Any]


class _Findings:
    """What ``check`` found: problems (the file is not usable as it is), warnings and hints."""

    def __init__(self, report: ConfigReport) -> None:
        self.problems: list[Finding] = [
            _finding(p.path or report.path, p.line, p.field, p.reason) for p in report.problems
        ]
        self.warnings: list[Finding] = [
            _finding(w.path or report.path, w.line, w.field, w.message) for w in report.warnings
        ]
        self.hints: list[str] = []


def _finding(file: Path | str | None, line: int | None, field: str | None, message: str) -> Finding:
    return {"file": str(file), "line": line, "field": field, "message": message}


@commands.command()
def check(
    json_mode: JsonOption = False,
    resolve: Annotated[
        bool,
        typer.Option("--resolve", help="Also resolve ${VAR} and secret:// references now (values are never printed)."),
    ] = False,
) -> None:
    """Validate the config and the skills; print every problem with its file, line and field.

    Warns, too, about skills that load with warnings, and about skill patterns and
    permission globs that match none of the tools known without starting a server.
    """
    out = Output(json_mode=json_mode)
    path = find_config(state.config)
    report = validate_config(path, resolve_references=resolve)
    found = _Findings(report)
    if report.config is not None:
        _check_what_the_config_brings(report.config, path, found)
    if json_mode:
        out.json(
            {
                "ok": not found.problems,
                "config": str(report.path),
                "format": report.dialect,
                "problems": found.problems,
                "warnings": found.warnings,
                "hints": found.hints,
            }
        )
    else:
        _print_findings(out, report, found)
    raise typer.Exit(EXIT["ok"] if not found.problems else EXIT["failed"])


def _check_what_the_config_brings(config: ToolsiftConfig, path: Path, found: _Findings) -> None:
    """Plugins, skills and the servers they own, pattern and rule coverage, and the tools held since pinned."""
    from .._assembly import unprovided_skill_tools
    from .._skill_servers import check_skill_servers, load_plugins, with_skill_servers

    # Plugins bring skills and servers: read once, for the skills and for what their servers mean.
    plugins, plugin_problems = load_plugins(config.skills.plugins)
    found.problems += [_finding(p.path or config.path, p.line, p.field, p.reason) for p in plugin_problems]
    with reported_here("toolsift.skills"):
        loaded = skills_loader(config, plugins=plugins).load()
    found.problems += [_finding(p.path, p.line, p.field, p.reason) for p in loaded.problems]
    found.warnings += [_finding(w.path, w.line, w.field, w.reason) for w in loaded.warnings]

    known = known_tools(path.parent)
    coverage = pattern_coverage(loaded, with_skill_servers(config, loaded, plugins), known)
    rules, rules_hint = rule_coverage(config, known)
    found.warnings += coverage.unmatched + rules
    owned_problems, owned_warnings = check_skill_servers(loaded, plugins, config)
    found.problems += [_finding(file, None, None, message) for file, message in owned_problems]
    found.warnings += [_finding(file, None, None, message) for file, message in owned_warnings]
    found.warnings += [_finding(w.path, None, w.field, w.message) for w in unprovided_skill_tools(config, loaded)]
    hints = (internal_hint(config.servers.values()), coverage.hint(), rules_hint)
    found.hints = [hint for hint in hints if hint]
    _check_held_tools(config, found)


def _check_held_tools(config: ToolsiftConfig, found: _Findings) -> None:
    """A warning for each tool changed or added since pinned, and each server's changed instructions (with
    the diff); a problem for an unreadable pin file."""
    try:
        pins = ToolPins.for_config(config)
        changes: list[ToolChange | InstructionsChange] = [*pins.changes(), *pins.instruction_changes()]
    except ConfigError as exc:
        found.problems.append(_finding(exc.path, None, None, exc.reason))
        return
    for change in changes:
        held = change.server not in config.servers or config.servers[change.server].pin_tools == "hold"
        subject = "they are" if isinstance(change, InstructionsChange) else "it is"
        message = (
            f"{_what(change)}; {subject} "
            + ("held back until accepted" if held else "kept usable (pinTools: warn)")
            + f" with 'toolsift trust --tools {change.server}'"
        )
        found.warnings.append({**_finding(config.path, None, None, message), "diff": change.diff})


def _what(change: ToolChange | InstructionsChange) -> str:
    """What a server changed or added since its pins, in words."""
    digests = f"({change.pinned[:19]} -> {change.listed[:19]})"
    if isinstance(change, InstructionsChange):
        return f"the instructions of server {change.server!r} changed since they were pinned {digests}"
    if change.added:
        listed = change.listed[:19]
        return f"tool {change.tool!r} of server {change.server!r} was added after its first listing ({listed})"
    return f"tool {change.tool!r} of server {change.server!r} changed its definition since it was pinned {digests}"


def _print_findings(out: Output, report: ConfigReport, found: _Findings) -> None:
    for item in found.problems:
        out.line(f"problem  {_where(item)}{item['message']}")
    for item in found.warnings:
        out.line(f"warning  {_where(item)}{item['message']}")
        for line in str(item.get("diff") or "").splitlines():
            out.line(f"           {line}")
    for hint in found.hints:
        out.line(f"hint     {hint}")
    verdict = "OK" if not found.problems else f"{len(found.problems)} problem(s)"
    read_as = f" (read as a {report.dialect} file)" if report.dialect != "toolsift" else ""
    out.line(
        f"{report.path}{read_as}: {verdict}, {len(found.warnings)} warning(s)",
        style="green" if not found.problems else "red",
    )


def _where(item: Finding) -> str:
    line = f":{item['line']}" if item.get("line") else ""
    field = f" {item['field']}:" if item.get("field") and item["field"] not in item["message"] else ""
    return f"{item['file']}{line}:{field} "
