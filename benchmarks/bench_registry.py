"""schemas_for_tools on 10,000 tools (50 servers x 200 tools) with a 5-pattern scope.

Run: python benchmarks/bench_registry.py

Reports the warm median (cache hit), the cold median (first call after a
registry change), the very first call on a fresh registry, and the same
selection done the naive way (fnmatch per tool per pattern) in the same run.
Targets: warm <= 20 us, cold <= 2 ms, >= 25x faster than naive cold.
"""

from __future__ import annotations

import fnmatch
from typing import Any

from _report import median_us, save

from toolsift.registry import ToolContext, ToolRegistry, ToolResult, ToolSpec, TurnScope
from toolsift.registry.formats import get_format

SERVERS = 50
TOOLS_PER_SERVER = 200
GLOBAL_SERVERS = 5
GROUPS = ["memory", "swarm", "agent", "task", "workflow", "session", "hooks", "system", "neural", "github"]
PATTERNS = ("srv07__memory_*", "srv12__*_search", "srv03__task_?", "srv01__agent_spawn*", "srv00__hooks_*")


class BenchTool:
    def __init__(self, name: str, server: str) -> None:
        schema = {"type": "object", "properties": {"key": {"type": "string", "description": "The key."},
                                                   "limit": {"type": "integer", "default": 10}},
                  "required": ["key"]}
        self.spec = ToolSpec(name=name, description=f"Does {name}.", input_schema=schema, server=server,
                             source="mcp")

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult.text("ok")


def tool_names(server: int) -> list[str]:
    names = []
    for index in range(TOOLS_PER_SERVER):
        group = GROUPS[index % len(GROUPS)]
        suffix = ["store", "search", "spawn", "get", "list"][index // len(GROUPS) % 5]
        names.append(f"srv{server:02d}__{group}_{suffix}{index}")
    return names


def build() -> ToolRegistry:
    registry = ToolRegistry()
    for server in range(SERVERS):
        name = f"srv{server:02d}"
        registry.replace_server(name, [BenchTool(n, name) for n in tool_names(server)],
                                internal=server >= GLOBAL_SERVERS)
    return registry


def naive(registry: ToolRegistry, scope: TurnScope, fmt_name: str) -> list[dict[str, Any]]:
    """What a registry without compiled, indexed globs does: every tool against every pattern."""
    fmt = get_format(fmt_name)
    out = []
    for tool in registry:
        name = tool.spec.name
        server = name.partition("__")[0]
        internal = registry.is_internal(name)
        if internal and not any(p.startswith(server + "__") for p in scope.skill_allowed):
            continue
        if any(fnmatch.fnmatchcase(name, p) for p in scope.skill_allowed):
            out.append(fmt.export(tool.spec, name))
    return out


def main() -> None:
    scope = TurnScope(skill_allowed=PATTERNS, skill="bench")
    fmt = "openai"

    fresh: list[ToolRegistry] = []
    fresh_us = median_us(lambda: fresh[-1].schemas_for_tools(scope, fmt), repeat=15,
                         setup=lambda: fresh.append(build()))
    registry = fresh[-1]
    selected = registry.schemas_for_tools(scope, fmt)
    assert len(selected) == len(naive(registry, scope, fmt)), "naive and indexed selections differ"

    warm_us = median_us(lambda: registry.schemas_for_tools(scope, fmt), repeat=20_000)
    bump = iter(range(10**9))

    def change() -> None:  # a registry change elsewhere: one unrelated server swapped
        registry.replace_server("other", [BenchTool(f"other__t{next(bump)}", "other")], internal=False)

    cold_us = median_us(lambda: registry.schemas_for_tools(scope, fmt), repeat=300, setup=change)
    naive_us = median_us(lambda: naive(registry, scope, fmt), repeat=15)
    naive_select_us = median_us(
        lambda: [t for t in registry if any(fnmatch.fnmatchcase(t.spec.name, p) for p in PATTERNS)], repeat=15)
    save("registry", {
        "tools": len(registry),
        "selected": len(selected),
        "warm_median_us": warm_us,
        "cold_median_us": cold_us,
        "first_call_fresh_registry_us": fresh_us,
        "naive_cold_median_us": naive_us,
        "naive_selection_only_median_us": naive_select_us,
        "speedup_cold_vs_naive": naive_us / cold_us,
        "target_warm_us": 20.0,
        "target_cold_us": 2000.0,
        "target_speedup": 25.0,
    })


if __name__ == "__main__":
    main()
