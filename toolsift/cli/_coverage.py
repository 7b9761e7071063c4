"""``toolsift check``: skill patterns that match no tool, as far as check can know.

check does not connect to servers (it is meant to run where they cannot start,
in CI for one), so the tool names it knows are the builtin tools and the tools a
toolbox adds itself; of each enabled server it knows the namespace only. A
pattern is reported when it can match none of those names and cannot reach a
configured server's tools: a typo in a builtin name, or a server the config does
not have (a misspelt ``mcp__`` name from Claude Code included). Patterns that
may match a configured server's tools are not checked, and the hint names those
servers, so that "OK" is never read as "every pattern matched". Entries kept
from Claude Code (``Bash(...)``, ``Read``) are left out: the skill loader warns
about each already.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..builtins import builtin_tools
from ..config import ToolsiftConfig
from ..mcp_sessions import ListMcpResources, ReadMcpResource
from ..registry import compile_patterns, literal_server
from ..search import SEARCH_TOOL_NAME
from ..skills import Skill

__all__ = ["PatternCoverage", "pattern_coverage"]


@dataclass
class PatternCoverage:
    """What check found about the skills' patterns.

    Attributes:
        unmatched: One warning item (file, line, field, message) per pattern that matches no tool.
        unlisted: Servers whose tools some pattern may match, which check does not list.
    """

    unmatched: list[dict[str, Any]] = field(default_factory=list)
    unlisted: set[str] = field(default_factory=set)

    def hint(self) -> str | None:
        """The line saying which servers' tools the patterns were not checked against; None when none."""
        if not self.unlisted:
            return None
        return (f"skill patterns that may name tools of {', '.join(sorted(self.unlisted))} were not checked: check "
                "does not connect to servers; 'toolsift tools --skill NAME' lists the tools a skill's turn sees")


def _known_names(folder: Path) -> list[str]:
    # Builtin tool names do not depend on the workspace; any existing folder builds them.
    builtins = [tool.spec.name for tool in builtin_tools(folder)]
    return [*builtins, SEARCH_TOOL_NAME, ListMcpResources.name, ReadMcpResource.name]


def pattern_coverage(skills: Iterable[Skill], config: ToolsiftConfig, folder: Path) -> PatternCoverage:
    """Check every toolsift pattern of ``skills`` against the tool names known without connecting.

    Args:
        skills: The loaded skills.
        config: The config, for its servers.
        folder: An existing folder (the config's), to build the builtin tools in.
    """
    known = _known_names(folder)
    servers = {server.namespace for server in config.servers.values() if server.enabled}
    coverage = PatternCoverage()
    for skill in skills:
        foreign = set(skill.foreign_tools)
        for key, patterns in (("allowed-tools", skill.allowed_tools), ("disallowed-tools", skill.disallowed_tools)):
            for pattern in patterns:
                if pattern in foreign or compile_patterns([pattern]).filter(known):
                    continue
                server = literal_server(pattern)
                reachable = ({server} if server is not None else servers if "*" in pattern or "?" in pattern
                             else set()) & servers
                if reachable:
                    coverage.unlisted |= reachable
                    continue
                if server is not None:
                    why = f"names server {server!r}, which is not an enabled server of the config " + (
                        f"({', '.join(sorted(servers))})" if servers else "(it has none)")
                else:
                    why = "matches no builtin tool and cannot match a configured server's tools"
                coverage.unmatched.append({"file": str(skill.path), "line": None, "field": key,
                                           "message": f"skill {skill.name!r}: pattern {pattern!r} {why}"})
    return coverage
