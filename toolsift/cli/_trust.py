"""Asking once per project before its config starts programs."""

from __future__ import annotations

import sys

from .._exceptions import ConfigError
from ..config import ProjectTrust, ToolsiftConfig, TrustCheck
from ..toolbox import user_config_path
from ._output import Output

__all__ = ["TRUST_ENV", "describe_launches", "ensure_trusted", "trust_store"]

TRUST_ENV = "TOOLSIFT_TRUST_PROJECT"


def trust_store() -> ProjectTrust:
    """The remembered consents, beside the user config."""
    return ProjectTrust(user_config_path().parent / "trusted-projects.json")


def describe_launches(config: ToolsiftConfig, names: tuple[str, ...]) -> list[str]:
    """One indented line per server: its name and the command (or URL) it launches."""
    lines = []
    for name in names:
        server = config.servers[name]
        target = server.url if server.url else " ".join([server.command or "", *server.args]).strip()
        lines.append(f"  {name}: {target}")
    return lines


def _question(check: TrustCheck, config: ToolsiftConfig) -> str:
    parts = [f"{check.path} came with this project and starts MCP servers you have not trusted here:"]
    parts += describe_launches(config, check.new)
    if check.changed:
        parts.append("and servers whose command, environment or URL changed since you trusted them:")
        parts += describe_launches(config, check.changed)
    return "\n".join(parts)


def ensure_trusted(config: ToolsiftConfig, out: Output, *, named: bool, assume: bool,
                   interactive: bool | None = None) -> None:
    """Start nothing a project's config launches until the person running toolsift has trusted it.

    Trusted when: the file was named (``--config`` or ``TOOLSIFT_CONFIG``: the
    person chose it) or is the user config (their own), its launches were
    trusted before, ``assume`` (``--trust-project`` or ``TOOLSIFT_TRUST_PROJECT=1``)
    is set, or the person says yes now (asked when ``interactive``, by default
    when stdin is a terminal), which is remembered.

    Raises:
        ConfigError: Declined, or no terminal to ask and no flag.
    """
    path = config.path
    if path is None or named or path.resolve() == user_config_path().resolve():
        return
    store = trust_store()
    check = store.check(config, path)
    if check.trusted:
        return
    if assume:
        out.note(f"trusting {path} for this run (--trust-project)")
        return
    question = _question(check, config)
    if not (sys.stdin.isatty() if interactive is None else interactive):
        raise ConfigError(f"{question}\nNothing was started. Run 'toolsift trust' in this folder to trust it, or "
                          f"pass --trust-project (or set {TRUST_ENV}=1) for one run", path=path)
    out.line(question, style="yellow")
    answer = input("Trust this project's servers and start them? [y/N]: ").strip().lower()
    if answer not in ("y", "yes"):
        raise ConfigError("not trusted; nothing was started", path=path)
    store.remember(config, path)
