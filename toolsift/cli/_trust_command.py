"""``toolsift trust``: trust a project's config ahead of time, forget that trust, or accept changed tools."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from .._exceptions import ConfigError
from .._folders import find_config
from ..config import StdioServer, ToolsiftConfig, validate_config
from ..config._internal import configured_settings
from ..mcp_sessions._internal import InstructionsChange, ToolChange, ToolPins
from ._app import state
from ._output import Output
from ._trust import describe_launches, describe_settings, trust_store

# Registered on the root app when a command of this module runs (see _app.COMMANDS).
commands = typer.Typer(add_completion=False, rich_markup_mode=None)


@commands.command()
def trust(
    revoke: Annotated[bool, typer.Option("--revoke", help="Forget the trust given to this project's config.")] = False,
    tools: Annotated[
        list[str] | None,
        typer.Option(
            "--tools",
            metavar="SERVER",
            help="Accept the changed or added tools and changed instructions of SERVER (repeatable): pin them "
            "as they are listed now.",
        ),
    ] = None,
) -> None:
    """Trust this folder's config ahead of time; --revoke forgets it, --tools SERVER accepts changed tools.

    Trust covers the config's servers and settings. It also lists the tools and instructions held back
    because their server changed or added them since they were pinned, with a diff of each.
    """
    out = Output()
    path = find_config(state.config)
    store = trust_store()
    if revoke:
        known = store.revoke(path)
        out.line(f"{path}: trust {'forgotten' if known else 'was never given'}")
        return
    config = validate_config(path).usable()
    if tools:
        _accept(out, config, path, tools)
        return
    names = tuple(name for name, server in config.servers.items() if server.enabled)
    for line in [f"{path} starts:", *describe_launches(config, names)] if names else [f"{path} starts no servers"]:
        out.line(line)
    settings = tuple(configured_settings(config))
    if settings:
        out.line(describe_settings(settings))
    store.remember(config, path)
    from .._assembly import project_skill_launches

    for declared, outside in project_skill_launches(config):  # what the project's skills and plugins start
        server = declared.server
        target = " ".join([server.command, *server.args]) if isinstance(server, StdioServer) else server.url
        out.line(f"{declared.file} starts: {server.name}: {target}")
        out.line(f"  it reaches outside your own folders: {outside.describe()}")
        store.remember_launch(declared.file, server)
    out.line(
        "Trusted here; asked again when a server is added or what it launches changes (command, arguments, "
        "folder, environment, env file or URL), or when those settings change."
    )
    pins = ToolPins.for_config(config)
    changes: list[ToolChange | InstructionsChange] = [*pins.changes(), *pins.instruction_changes()]
    if changes:
        out.line("")
        out.line(
            "Held back: tools and instructions their server changed or added since they were pinned.", style="yellow"
        )
        _show(out, changes)
        servers = " ".join(f"--tools {server}" for server in dict.fromkeys(c.server for c in changes))
        out.line(f"Review the changes above; accept them with 'toolsift trust {servers}'.")


def _show(out: Output, changes: Sequence[ToolChange | InstructionsChange]) -> None:
    for change in changes:
        what = change.tool if isinstance(change, ToolChange) else "(instructions)"
        out.line(f"{change.server}/{what}: {change.pinned or '(added)'} -> {change.listed}")
        for line in change.diff.splitlines():
            out.line(f"  {line}", style="green" if line.startswith("+") else "red" if line.startswith("-") else None)


def _accept(out: Output, config: ToolsiftConfig, path: Path, servers: list[str]) -> None:
    """Pin the recorded changed definitions of ``servers``' tools, showing what is accepted."""
    unknown = [name for name in servers if name not in config.servers]
    if unknown:
        known = ", ".join(sorted(config.servers)) or "none"
        raise ConfigError(f"no server {unknown[0]!r} in this config (its servers: {known})", path=path)
    pins = ToolPins.for_config(config)
    for server in servers:
        changes: list[ToolChange | InstructionsChange] = [*pins.changes([server]), *pins.instruction_changes([server])]
        try:
            accepted = [*pins.accept(server), *(["its instructions"] if pins.accept_instructions(server) else [])]
        except OSError as exc:
            raise ConfigError(f"cannot save the pinned tool definitions: {exc}", path=pins.file) from exc
        if not accepted:
            out.line(f"{server}: no changed tool definitions to accept")
            continue
        _show(out, changes)
        out.line(
            f"{server}: accepted {', '.join(accepted)}; a running toolsift uses them at the server's next "
            "listing (a reconnect, a restart, tools/list_changed)"
        )
