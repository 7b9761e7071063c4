"""Asking once per project before its config starts programs or decides what a model may do."""

from __future__ import annotations

import os
import sys

from .._exceptions import ConfigError
from .._folders import user_config_path, user_folder
from ..config import HttpServer, ProjectTrust, StdioServer, ToolsiftConfig, TrustedLaunches
from ..config._internal import TrustCheck
from ._app import TRUST_ENV
from ._output import Output

__all__ = ["TRUST_ENV", "describe_launches", "describe_settings", "ensure_trusted", "trust_store"]


def trust_store() -> ProjectTrust:
    """The remembered consents, beside the user config."""
    return ProjectTrust(user_folder() / "trusted-projects.json")


def describe_launches(config: ToolsiftConfig, names: tuple[str, ...]) -> list[str]:
    """One indented line per server: its name and the command (or URL) it launches."""
    lines = []
    for name in names:
        match server := config.servers[name]:
            case StdioServer():
                target = " ".join([server.command, *server.args])
            case HttpServer():
                target = server.url
        lines.append(f"  {name}: {target}")
    return lines


def describe_settings(sections: tuple[str, ...]) -> str:
    """The line naming the settings outside the servers that a consent covers."""
    return f"settings that decide what agents and served models may do: {', '.join(sections)}"


def _question(check: TrustCheck, config: ToolsiftConfig, *, subject: str) -> str:
    parts = [f"{subject} came with this project, and you have not trusted here what it does:"]
    if check.new:
        parts += ["MCP servers it starts:", *describe_launches(config, check.new)]
    if check.changed:
        parts += [
            "servers whose launch (command, arguments, folder, environment, env file or URL) changed "
            "since you trusted them:",
            *describe_launches(config, check.changed),
        ]
    if check.settings:
        parts.append(describe_settings(check.settings))
    return "\n".join(parts)


def _without_servers(config: ToolsiftConfig) -> ToolsiftConfig:
    tools = config.tools.model_copy(update={"mcp_servers": {}})
    return config.model_copy(update={"tools": tools})


def ensure_trusted(
    config: ToolsiftConfig,
    out: Output,
    *,
    named: bool,
    assume: bool,
    interactive: bool | None = None,
    servers: bool = True,
) -> TrustedLaunches | None:
    """Use nothing of a project's config (servers, settings) until the person running toolsift has trusted it.

    Trusted when: the file was named (``--config`` or ``TOOLSIFT_CONFIG``: the
    person chose it) or is the user config (their own, at its own path, not
    through a link in the project), what it launches and sets was trusted
    before, ``assume`` (``--trust-project`` or ``TOOLSIFT_TRUST_PROJECT=1``)
    is set, or the person says yes now (asked when ``interactive``, by default
    when stdin is a terminal), which is remembered.

    Args:
        config: The loaded config.
        out: Where the question and notes go.
        named: The person named the file.
        assume: Trust it for this run without asking.
        interactive: Ask at the terminal (default: when stdin is one).
        servers: The mode starts the file's servers; False checks only its other settings.

    Returns:
        What the file may launch from now on (for hot reload); None for a file that needs no trust.

    Raises:
        ConfigError: Declined, or no terminal to ask and no flag.
    """
    path = config.path
    if path is None or named or os.path.abspath(path) == os.path.abspath(user_config_path()):
        return None
    if not servers:
        config = _without_servers(config)
    store = trust_store()
    check = store.check(config, path)
    if check.trusted:
        return store.launches(config, path)
    if assume:
        out.note(f"trusting {path} for this run (--trust-project)")
        return store.launches(config, path)
    if not (sys.stdin.isatty() if interactive is None else interactive):
        question = _question(check, config, subject="this file")  # the error names the file before it
        raise ConfigError(
            f"{question}\nNothing was started. Run 'toolsift trust' in this folder to trust it, or "
            f"pass --trust-project (or set {TRUST_ENV}=1) for one run",
            path=path,
        )
    out.line(_question(check, config, subject=str(path)), style="yellow")
    answer = input("Trust this project's config and use it? [y/N]: ").strip().lower()
    if answer not in ("y", "yes"):
        raise ConfigError("not trusted; nothing was started", path=path)
    store.remember(config, path)
    return store.launches(config, path)
