"""``toolsift check``: skill patterns and permission globs that match no tool, as far as check can know.

check does not connect to servers (it is meant to run where they cannot start,
in CI for one), so the tool names it knows are the builtin tools and the tools a
toolbox adds itself; of each enabled server it knows the namespace only. A
pattern is reported when it can match none of those names and cannot reach a
configured server's tools: a typo in a builtin name, or a server the config does
not have (a misspelt ``mcp__`` name from Claude Code included). Patterns that
may match a configured server's tools are not checked, and the hint names those
servers, so that "OK" is never read as "every pattern matched". Entries kept
from Claude Code (``Bash(...)``, ``Read``) are left out: the skill loader warns
about each already. Permission globs (``denylist``, ``allowlist``, ``ask``,
``tools.permissions``, ``allowedTools``) are judged the same way, by
``permission_glob_warnings``, which a starting toolbox or server runs again
against the tools its servers listed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._globs import compile_patterns, literal_server
from ..builtins import builtin_tools
from ..config import ToolsiftConfig
from ..config._internal import permission_glob_warnings
from ..mcp_sessions._internal import ListMcpResources, ReadMcpResource
from ..registry import ToolRegistry
from ..search import SearchIndex, SearchToolsTool
from ..skills import Skill

__all__ = ["PatternCoverage", "known_tools", "pattern_coverage", "rule_coverage"]


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
        return (
            f"skill patterns that may name tools of {', '.join(sorted(self.unlisted))} were not checked: check "
            "does not connect to servers; 'toolsift tools --skill NAME' lists the tools a skill's turn sees"
        )


def known_tools(folder: Path) -> ToolRegistry:
    """The tools known without connecting: builtins, search_tools and the resource tools (never called here)."""
    # Builtin tool names do not depend on the workspace; any existing folder builds them.
    registry = ToolRegistry()
    registry.register_many([*builtin_tools(folder), ListMcpResources({}), ReadMcpResource({})])
    registry.register(SearchToolsTool(SearchIndex(registry)), internal=True)
    return registry


def rule_coverage(config: ToolsiftConfig, known: ToolRegistry) -> tuple[list[dict[str, Any]], str | None]:
    """Permission globs of ``config`` that match no tool ``known`` holds, and the hint naming what was not checked.

    Globs that may name a configured server's tools are not judged (check does
    not connect); the hint lists those servers.
    """
    serve = config.serve
    warnings, unchecked = permission_glob_warnings(
        config, known, upstream=serve.gateway is not False and not serve.prefix_names
    )
    items = [
        {"file": str(w.path or config.path), "line": w.line, "field": w.field, "message": w.message} for w in warnings
    ]
    hint = (
        None
        if not unchecked
        else (
            f"permission rules that may name tools of {', '.join(sorted(unchecked))} were not checked: check does not "
            "connect to servers; a starting toolbox or 'toolsift serve' logs the rules that match none of their tools"
        )
    )
    return items, hint


def pattern_coverage(skills: Iterable[Skill], config: ToolsiftConfig, known_registry: ToolRegistry) -> PatternCoverage:
    """Check every toolsift pattern of ``skills`` against the tool names known without connecting.

    Args:
        skills: The loaded skills.
        config: The config, for its servers.
        known_registry: The tools known without connecting (:func:`known_tools`).
    """
    known = [tool.spec.name for tool in known_registry]
    servers = {server.namespace for server in config.servers.values() if server.enabled}
    coverage = PatternCoverage()
    for skill in skills:
        foreign = set(skill.foreign_tools)
        for key, patterns in (("allowed-tools", skill.allowed_tools), ("disallowed-tools", skill.disallowed_tools)):
            for pattern in patterns:
                if pattern in foreign or compile_patterns([pattern]).filter(known):
                    continue
                server = literal_server(pattern)
                reachable = (
                    {server} if server is not None else servers if "*" in pattern or "?" in pattern else set()
                ) & servers
                if reachable:
                    coverage.unlisted |= reachable
                    continue
                if server is not None:
                    why = f"names server {server!r}, which is not an enabled server of the config " + (
                        f"({', '.join(sorted(servers))})" if servers else "(it has none)"
                    )
                else:
                    why = "matches no builtin tool and cannot match a configured server's tools"
                coverage.unmatched.append(
                    {
                        "file": str(skill.path),
                        "line": None,
                        "field": key,
                        "message": f"skill {skill.name!r}: pattern {pattern!r} {why}",
                    }
                )
    return coverage
