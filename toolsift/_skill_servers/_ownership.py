"""Which MCP servers each skill owns: its own ``.mcp.json``, and its plugin's servers.

A skill's servers are named as their file names them (a plugin's as
``plugin_<plugin>_<server>``). A name can mean one server only: a skill's server
named like a configured server, or like another skill's server from another
file, cannot start, and the skill says why, naming both files. The first
claim wins: configured servers, then skills in discovery order (the loader's
precedence), so a skill added later never takes a name away from one that works.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import final

from .._exceptions import ConfigError
from ..config import ServerConfig
from ..skills import Skill
from ._plugin import Plugin
from ._server_file import SERVER_FILE, Declared, read_server_file

__all__ = ["OwnedServers", "owned_servers"]


@final
@dataclass(frozen=True)
class OwnedServers:
    """The servers one skill brings, or why it cannot have them.

    Attributes:
        skill: The skill's name.
        declared: Its servers (skill-owned: internal, unsearchable), in file order, each with the file that
            declares it (what the trust rule judges it on).
        plugin: The plugin the skill came with, if any.
        problem: Why its servers cannot be used (a bad file, a name clash); None when they can.
    """

    skill: str
    declared: tuple[Declared, ...] = ()
    plugin: Plugin | None = None
    problem: str | None = None

    @property
    def servers(self) -> tuple[ServerConfig, ...]:
        """Its servers, in file order."""
        return tuple(entry.server for entry in self.declared)

    @property
    def sources(self) -> dict[str, Path]:
        """The file that declares each server, by server name."""
        return {entry.server.name: entry.file for entry in self.declared}

    @property
    def namespaces(self) -> tuple[str, ...]:
        """The namespaces of its servers' tools (``<namespace>__<tool>``)."""
        return tuple(server.namespace for server in self.servers)


def owned_servers(
    skills: Iterable[Skill], plugins: Sequence[Plugin], *, taken: Mapping[str, str] | None = None
) -> dict[str, OwnedServers]:
    """The servers of each skill that brings any (or whose server file is broken), by skill name.

    Args:
        skills: The loaded skills, in precedence order.
        plugins: The plugins whose skill folders some of them came from.
        taken: Names and namespaces already in use (the configured servers), each with where it is defined.
    """
    claims: dict[str, str] = dict(taken or {})
    found: dict[str, OwnedServers] = {}
    for skill in skills:
        if skill.path is None:
            continue
        plugin = next((p for p in plugins if skill.path.parent.parent in p.skill_folders), None)
        owned = _read(skill, plugin)
        if owned is not None:
            found[skill.name] = _claim(owned, claims)
    return found


def _read(skill: Skill, plugin: Plugin | None) -> OwnedServers | None:
    assert skill.path is not None
    declared: dict[str, Declared] = {}
    if plugin is not None:
        if plugin.problem is not None:
            return OwnedServers(skill.name, plugin=plugin, problem=f"its plugin's servers: {plugin.problem}")
        declared.update(plugin.servers)
    file = skill.path.parent / SERVER_FILE
    if file.is_file():
        try:
            # The skill's real folder: what a linked skill folder runs from is where the link leads.
            declared.update(read_server_file(file, root=Path(os.path.realpath(skill.path.parent))))
        except ConfigError as exc:
            return OwnedServers(skill.name, plugin=plugin, problem=str(exc))
    if not declared:
        return None
    return OwnedServers(skill.name, tuple(declared.values()), plugin)


def _claim(owned: OwnedServers, claims: dict[str, str]) -> OwnedServers:
    """``owned``, or its clash with a name claimed before; its names are claimed when it has none."""
    mine: dict[str, str] = {}
    for entry in owned.declared:
        where = str(entry.file)
        for key in dict.fromkeys((entry.server.name, entry.server.namespace)):
            other = claims.get(key)
            if other is not None and other != where:
                problem = (
                    f"server {key!r} of {where} has the name of a server of {other}; "
                    "rename one of them (a skill's servers cannot share a name with another server)"
                )
                return OwnedServers(owned.skill, owned.declared, owned.plugin, problem)
            mine[key] = where
    claims.update(mine)
    return owned
