"""What ``toolsift check`` says of the servers skills own."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .._globs import literal_server
from ..config import ToolsiftConfig
from ..registry import ToolRegistry
from ..skills import SkillSet
from ._host import SkillServers
from ._ownership import owned_servers
from ._plugin import Plugin

__all__ = ["check_skill_servers", "with_skill_servers"]


def check_skill_servers(
    skills: SkillSet, plugins: Sequence[Plugin], config: ToolsiftConfig
) -> tuple[list[tuple[Path, str]], list[tuple[Path, str]]]:
    """What ``toolsift check`` says of the skills' own servers, without starting any: (problems, warnings).

    A problem is a skill that cannot work (a bad server file, a name clash, a program not found);
    a warning, a server whose tools the skill's ``allowed-tools`` never name (so they never show).
    """
    host = SkillServers(
        ToolRegistry(), lambda: skills, plugins=plugins, configured=config.servers.values, config_path=config.path
    )
    problems: list[tuple[Path, str]] = []
    warnings: list[tuple[Path, str]] = []
    for name, owned in host.owned().items():
        path = skills.get(name).path or Path()
        why = host.problem(name)
        if why is not None:
            problems.append((path, f"skill {name!r} cannot be used: {why}"))
        named = {literal_server(pattern) for pattern in skills.get(name).allowed_tools}
        for server in owned.servers:
            if server.namespace not in named:
                warnings.append(
                    (
                        path,
                        f"skill {name!r}: allowed-tools names no tool of its server {server.name!r} "
                        f"({server.namespace}__<tool>), so none of them is ever shown",
                    )
                )
    return problems, warnings


def with_skill_servers(config: ToolsiftConfig, skills: SkillSet, plugins: Sequence[Plugin]) -> ToolsiftConfig:
    """``config`` with the servers skills own added beside its own, for checks that judge a pattern by its server."""
    owned = {server.name: server for entry in owned_servers(skills, plugins).values() for server in entry.servers}
    servers = {**owned, **config.servers}
    return config.model_copy(update={"tools": config.tools.model_copy(update={"mcp_servers": servers})})
