"""``toolsift trust``: trust a project's config ahead of time, or forget that trust."""

from __future__ import annotations

from typing import Annotated

import typer

from .._folders import find_config
from ..config import configured_settings, validate_config
from ._app import state
from ._output import Output
from ._trust import describe_launches, describe_settings, trust_store

# Registered on the root app when a command of this module runs (see _app.COMMANDS).
commands = typer.Typer(add_completion=False, rich_markup_mode=None)


@commands.command()
def trust(
    revoke: Annotated[bool, typer.Option("--revoke", help="Forget the trust given to this project's config.")] = False,
) -> None:
    """Trust this folder's config (its servers and settings) ahead of time, or forget it with --revoke."""
    out = Output()
    path = find_config(state.config)
    store = trust_store()
    if revoke:
        known = store.revoke(path)
        out.line(f"{path}: trust {'forgotten' if known else 'was never given'}")
        return
    config = validate_config(path).usable()
    names = tuple(name for name, server in config.servers.items() if server.enabled)
    for line in [f"{path} starts:", *describe_launches(config, names)] if names else [f"{path} starts no servers"]:
        out.line(line)
    settings = tuple(configured_settings(config))
    if settings:
        out.line(describe_settings(settings))
    store.remember(config, path)
    out.line(
        "Trusted here; asked again when a server is added or what it launches changes (command, arguments, "
        "folder, environment, env file or URL), or when those settings change."
    )
