"""The MCP servers skills own: a skill's ``.mcp.json``, a Claude Code plugin's servers.

Reading them (``_server_file``, ``_plugin``), deciding which skill owns which
(``_ownership``), where each one's start reaches and whether the person's trust
covers it (``_reach``), running them as skills are used (``_host``:
:class:`SkillServers`) and checking them without starting any (``_check``). A
root package: it sits on ``config``, ``mcp_sessions`` and ``skills``, and the
composition root (``_assembly``) and the CLI use it; none of it is public
(``Toolbox`` and the ``skills`` config section are how users reach it).
"""

from ._check import check_skill_servers as check_skill_servers
from ._check import with_skill_servers as with_skill_servers
from ._host import Lease as Lease
from ._host import SkillServers as SkillServers
from ._launch import launch_problem as launch_problem
from ._ownership import OwnedServers as OwnedServers
from ._ownership import owned_servers as owned_servers
from ._plugin import Plugin as Plugin
from ._plugin import load_plugins as load_plugins
from ._plugin import read_plugin as read_plugin
from ._reach import LaunchPath as LaunchPath
from ._reach import untrusted_path as untrusted_path
from ._server_file import Declared as Declared

__all__ = [
    "Declared",
    "LaunchPath",
    "Lease",
    "OwnedServers",
    "Plugin",
    "SkillServers",
    "check_skill_servers",
    "launch_problem",
    "load_plugins",
    "owned_servers",
    "read_plugin",
    "untrusted_path",
    "with_skill_servers",
]
