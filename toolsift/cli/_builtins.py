"""``toolsift builtins on|off``: the workspace tools switched on or off in a config, trusted as written.

The workspace tools (``read_file``, ``write_file``, ``list_directory``,
``exec_shell``) are off by default. Switching them on is one command, not a
hand edit of ``tools.builtins`` followed by ``toolsift trust``: the person who
runs it wrote the setting, so a project's settings trusted before stay
trusted with it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .._exceptions import ConfigError
from .._folders import CONFIG_NAME
from ..config import load_config
from ._app import state
from ._config_file import edit_json
from ._mcp import ScopeOption, _files
from ._output import Output
from ._trust import trust_store

# Registered on the root app when a command of this module runs (see _app.COMMANDS).
commands = typer.Typer(add_completion=False, rich_markup_mode=None)
builtins_app = typer.Typer(
    help="Switch the workspace tools (read_file, write_file, list_directory, exec_shell) on or off.",
    no_args_is_help=True,
)
commands.add_typer(builtins_app, name="builtins")


@builtins_app.command("on")
def on(
    allow: Annotated[
        list[str] | None, typer.Option("--allow", help="A program exec_shell may run (repeatable): git, pytest.")
    ] = None,
    scope: ScopeOption = None,
) -> None:
    """Switch the workspace tools on (in the config's folder, its workspace); --allow adds programs for exec_shell."""
    _switch(enabled=True, programs=list(allow or []), scope=scope)


@builtins_app.command("off")
def off(scope: ScopeOption = None) -> None:
    """Switch the workspace tools off."""
    _switch(enabled=False, programs=[], scope=scope)


def _switch(*, enabled: bool, programs: list[str], scope: str | None) -> None:
    out = Output()
    [(where, path)] = _files(scope or ("project" if state.config is None else None))
    if where != "file" and path.name != CONFIG_NAME:
        raise ConfigError(
            f"the workspace tools are a toolsift setting, and {path.name} is another client's file: "
            f"put it in {CONFIG_NAME} beside it, or name a file with -c",
            path=path,
        )
    trusted_before = where == "project" and _settings_trusted(path)
    with edit_json(path) as data:
        _set(data, path, enabled, programs)
    out.line(f"Workspace tools {'on' if enabled else 'off'} in {path} ({where})")
    if trusted_before:
        trust_store().remember_settings(path, load_config(path, lenient=True))
    elif where == "project":
        out.note(f"the other settings of {path} are not trusted yet: 'toolsift trust' after reviewing them")


def _set(data: dict[str, Any], path: Path, enabled: bool, programs: list[str]) -> None:
    """Write ``tools.builtins`` into the file's object, keeping what else it holds."""
    table: Any = data
    for key in ("tools", "builtins"):
        table = table.setdefault(key, {})
        if not isinstance(table, dict):
            raise ConfigError(
                f"{key!r} is not an object, so the setting cannot go in it; it was left as it is", path=path
            )
    table["enabled"] = enabled
    if programs:
        commands_table = table.setdefault("commands", {})
        known = commands_table.get("allowedPrograms", [])
        commands_table["allowedPrograms"] = [*known, *(p for p in programs if p not in known)]


def _settings_trusted(path: Path) -> bool:
    """Whether the project file's settings (outside its servers) are trusted as they stand; True with no file."""
    if not path.is_file():
        return True
    return not trust_store().check(load_config(path, lenient=True), path).settings
