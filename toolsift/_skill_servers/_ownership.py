"""Which MCP servers each skill owns: its own ``.mcp.json``, and its plugin's servers.

A skill's servers are named as their file names them (a plugin's as
``plugin_<plugin>_<server>``). A name can mean one server only: a skill's server
named like a configured server, or like another skill's server from another
file, cannot start, and the skill says why, naming both files. The first
claim wins: configured servers, then skills in discovery order (the loader's
precedence), so a skill added later never takes a name away from one that works.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import final

from .._exceptions import ConfigError
from ..config import ServerConfig
from ..skills import Skill
from ._plugin import Plugin
from ._server_file import SERVER_FILE, read_server_file

__all__ = ["OwnedServers", "owned_servers"]


@final
@dataclass(frozen=True)
class OwnedServers:
    """The servers one skill brings, or why it cannot have them.

    Attributes:
        skill: The skill's name.
        servers: Its servers (skill-owned: internal, unsearchable), in file order.
        sources: The file each server came from, by server name (what the trust rule keys on).
        plugin: The plugin the skill came with, if any.
        problem: Why its servers cannot be used (a bad file, a name clash); None when they can.
    """

    skill: str
    servers: tuple[ServerConfig, ...] = ()
    sources: Mapping[str, Path] = field(default_factory=dict)
    plugin: Plugin | None = None
    problem: str | None = None

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
    servers: dict[str, ServerConfig] = {}
    sources: dict[str, Path] = {}
    if plugin is not None:
        if plugin.problem is not None:
            return OwnedServers(skill.name, plugin=plugin, problem=f"its plugin's servers: {plugin.problem}")
        servers.update(plugin.servers)
        sources.update(dict.fromkeys(plugin.servers, plugin.server_file or plugin.manifest))
    file = skill.path.parent / SERVER_FILE
    if file.is_file():
        try:
            own = read_server_file(file, root=skill.path.parent)
        except ConfigError as exc:
            return OwnedServers(skill.name, plugin=plugin, problem=str(exc))
        servers.update(own)
        sources.update(dict.fromkeys(own, file))
    if not servers:
        return None
    return OwnedServers(skill.name, tuple(servers.values()), sources, plugin)


def _claim(owned: OwnedServers, claims: dict[str, str]) -> OwnedServers:
    """``owned``, or its clash with a name claimed before; its names are claimed when it has none."""
    mine: dict[str, str] = {}
    for server in owned.servers:
        where = str(owned.sources[server.name])
        for key in dict.fromkeys((server.name, server.namespace)):
            other = claims.get(key)
            if other is not None and other != where:
                problem = (
                    f"server {key!r} of {where} has the name of a server of {other}; "
                    "rename one of them (a skill's servers cannot share a name with another server)"
                )
                return OwnedServers(owned.skill, owned.servers, owned.sources, owned.plugin, problem)
            mine[key] = where
    claims.update(mine)
    return owned
