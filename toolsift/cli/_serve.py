"""``toolsift serve``: expose builtin tools, skills and (as a gateway) MCP tools over MCP."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer

from ._output import Output
from ._toolbox import trusted_config

# Registered on the root app when a command of this module runs (see _app.COMMANDS).
commands = typer.Typer(add_completion=False, rich_markup_mode=None)

TRANSPORTS = ("stdio", "http")


@commands.command()
def serve(
    transport: Annotated[str | None, typer.Option("--transport", "-t", help="stdio (default) or http.")] = None,
    host: Annotated[str | None, typer.Option("--host", help="HTTP: address to bind (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option("--port", "-p", help="HTTP: port (0 picks a free one).")] = None,
    stateless: Annotated[bool, typer.Option("--stateless", help="HTTP: no MCP session ids.")] = False,
    json_response: Annotated[bool, typer.Option("--json-response", help="HTTP: plain JSON bodies.")] = False,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            help="HTTP: uvicorn worker processes; more than 1 needs --stateless or shared sessions (serve.shared).",
        ),
    ] = None,
    profile: Annotated[str | None, typer.Option("--profile", help="Agent profile the server runs as.")] = None,
    gateway: Annotated[bool, typer.Option("--gateway", help="Also serve the configured MCP servers' tools.")] = False,
    gateway_skill: Annotated[
        str | None, typer.Option("--gateway-skill", help="Serve the MCP tools a skill's allowed-tools name.")
    ] = None,
    ready_file: Annotated[Path | None, typer.Option("--ready-file", help="HTTP: write the URL here once up.")] = None,
    redis: Annotated[
        str | None, typer.Option("--redis", help="HTTP: share sessions with other replicas through this Redis URL.")
    ] = None,
    replica: Annotated[str | None, typer.Option("--replica", help="This replica's name in Redis.")] = None,
) -> None:
    """Serve toolsift over MCP: `claude mcp add toolsift -- toolsift serve`.

    Settings come from the config's `serve` section; these options override them.
    """
    from ..serve._internal import main as serve_main

    if transport is not None and transport not in TRANSPORTS:
        raise typer.BadParameter(
            f"{transport!r} is not one of {', '.join(map(repr, TRANSPORTS))}", param_hint="'--transport'"
        )
    if workers is not None and workers < 1:
        raise typer.BadParameter(f"{workers} is not a number of processes (1 or more)", param_hint="'--workers'")
    # stdin may be the MCP wire here, so there is no asking: trust is given ahead of time or by flag. The
    # settings (serve, agents, workspace) decide what a served model may do, so they need it in every mode;
    # the servers only where they start, as a gateway.
    config, _, launches = trusted_config(
        Output(),
        interactive=False,
        starts_servers=lambda file: bool(gateway or gateway_skill or file.serve.gateway is not False),
    )
    assert config.path is not None  # loaded from a file
    values = {
        "--transport": transport,
        "--host": host,
        "--port": port,
        "--workers": workers,
        "--profile": profile,
        "--gateway-skill": gateway_skill,
        "--ready-file": ready_file,
        "--redis": redis,
        "--replica": replica,
    }
    switches = {"--stateless": stateless, "--json-response": json_response, "--gateway": gateway}
    argv = ["--config", str(config.path), *_command_line(values, switches)]
    raise typer.Exit(serve_main(argv, config=config, trust=launches))


def _command_line(values: Mapping[str, object | None], switches: Mapping[str, bool]) -> list[str]:
    """The server's own options for what was given here: each value after its flag, each switch that is on."""
    given = [part for flag, value in values.items() if value is not None for part in (flag, str(value))]
    return given + [flag for flag, on in switches.items() if on]
