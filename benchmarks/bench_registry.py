"""schemas_for_tools at 1,000, 10,000 and 100,000 tools for literal-only, mixed and wildcard-only skills.

Run: python benchmarks/bench_registry.py

Catalogue: servers of 200 tools each, one server in ten global (the rest
internal, surfaced only by patterns naming them). For each size and skill it
reports, in the same run:

- warm: the same scope again (cache hit);
- cold: the first call after an unrelated server was swapped;
- new scope: the first call for a pattern set never listed before (the
  skill's patterns plus one new one);
- fresh patterns: the first call for a skill of the same kind whose patterns
  are all drawn at random from thousands of realistic ones (servers, groups,
  actions, digits), so nearly none was ever listed: the cost of a skill never
  seen before;
- naive: the same selection the naive way (every tool, ``fnmatch`` per pattern),
  the anchor the speedups are measured against.

Targets: cold <= 0.5 ms at 10k and <= 2 ms at 100k, >= 25x the naive loop.
"""

from __future__ import annotations

import fnmatch
import itertools
import random
from typing import Any

from _report import median_us, save

from toolsift.registry import ToolContext, ToolRegistry, ToolResult, ToolSpec, TurnScope
from toolsift.registry.formats import get_format

TOOLS_PER_SERVER = 200
GLOBAL_EVERY = 10
SIZES = (1_000, 10_000, 100_000)
GROUPS = ["memory", "swarm", "agent", "task", "workflow", "session", "hooks", "system", "neural", "github"]
ACTIONS = ["store", "search", "spawn", "get", "list"]
SKILLS = {
    "literal": ("srv07__memory_*", "srv12__*_search", "srv03__task?_get", "srv01__agent_*", "srv00__hooks*"),
    "mixed": (
        "srv07__memory_*",
        "srv12__*_search",
        "srv03__task?_get",
        "*_search",
        "*memory1?_store",
        "srv01__agent_*",
        "srv00__hooks*",
        "*swarm*_list",
        "?",
        "srv05__*",
    ),
    "wildcard": ("*_search", "*memory1?_store", "*swarm*_list", "?", "*neural?_get"),
}
FORMAT = "openai"
# How many of each kind a fresh skill draws: (naming a server, bare wildcard).
FRESH_KINDS = {"literal": (5, 0), "mixed": (5, 5), "wildcard": (0, 5)}


class BenchTool:
    def __init__(self, name: str, server: str) -> None:
        schema = {
            "type": "object",
            "properties": {
                "key": {"type": "string", "description": "The key."},
                "limit": {"type": "integer", "default": 10},
            },
            "required": ["key"],
        }
        self.spec = ToolSpec(name=name, description=f"Does {name}.", input_schema=schema, server=server, source="mcp")

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult.text("ok")


def tool_names(server: int) -> list[str]:
    return [
        f"srv{server:02d}__{GROUPS[i % len(GROUPS)]}{i}_{ACTIONS[i // len(GROUPS) % len(ACTIONS)]}"
        for i in range(TOOLS_PER_SERVER)
    ]


def build(size: int) -> ToolRegistry:
    registry = ToolRegistry()
    for server in range(size // TOOLS_PER_SERVER):
        name = f"srv{server:02d}"
        registry.replace_server(
            name, [BenchTool(n, name) for n in tool_names(server)], internal=server % GLOBAL_EVERY != 0
        )
    return registry


def naive(registry: ToolRegistry, scope: TurnScope) -> list[dict[str, Any]]:
    """What a registry without compiled, indexed globs does: every tool against every pattern."""
    fmt = get_format(FORMAT)
    out = []
    for tool in registry:
        name = tool.spec.name
        server = name.partition("__")[0]
        if registry.is_internal(name) and not any(
            p.startswith(server + "__") and fnmatch.fnmatchcase(name, p) for p in scope.skill_allowed
        ):
            continue
        if any(fnmatch.fnmatchcase(name, p) for p in scope.skill_allowed):
            out.append(fmt.export(tool.spec, name))
    return out


def fresh_patterns(rng: random.Random, servers: int, skill: str) -> tuple[str, ...]:
    """A skill of the given kind drawn at random: literal forms name a server, bare ones do not."""
    literal, bare = FRESH_KINDS[skill]

    def words() -> tuple[str, str, int]:
        return rng.choice(GROUPS), rng.choice(ACTIONS), rng.randrange(40)

    def named() -> str:
        group, action, digit = words()
        server = f"srv{rng.randrange(servers):02d}__"
        return server + rng.choice(
            [f"{group}*", f"*_{action}", f"{group}{digit}_{action}", f"{group}?_{action}", f"{group}{digit}*"]
        )

    def wildcard() -> str:
        group, action, digit = words()
        return rng.choice(
            [
                f"*{group}{digit}_*",
                f"*_{action}",
                f"*{group}*_{action}",
                f"*{group}{digit // 10}?_*",
                f"*{digit}_{action}",
            ]
        )

    return (*(named() for _ in range(literal)), *(wildcard() for _ in range(bare)))


def measure(registry: ToolRegistry, skill: str, repeat: int) -> dict[str, float]:
    patterns = SKILLS[skill]
    scope = TurnScope(skill_allowed=patterns, skill="bench")
    selected = registry.schemas_for_tools(scope, FORMAT)
    reference = naive(registry, scope)
    assert [s["function"]["name"] for s in selected] == [s["function"]["name"] for s in reference], (
        "naive and indexed selections differ"
    )
    warm = median_us(lambda: registry.schemas_for_tools(scope, FORMAT), repeat=repeat * 20)
    bump = itertools.count()

    def change() -> None:  # a registry change elsewhere: one unrelated server swapped
        registry.replace_server("other", [BenchTool(f"other__t{next(bump)}", "other")], internal=False)

    cold = median_us(lambda: registry.schemas_for_tools(scope, FORMAT), repeat=repeat, setup=change)
    fresh_scopes = (TurnScope(skill_allowed=(*patterns, f"never{i}__seen")) for i in itertools.count())
    new_scope = median_us(lambda: registry.schemas_for_tools(next(fresh_scopes), FORMAT), repeat=repeat)
    rng = random.Random(7)
    servers = len(registry.servers())
    fresh_scopes = (TurnScope(skill_allowed=fresh_patterns(rng, servers, skill)) for _ in itertools.count())
    fresh = median_us(lambda: registry.schemas_for_tools(next(fresh_scopes), FORMAT), repeat=repeat)
    naive_us = median_us(lambda: naive(registry, scope), repeat=5)
    return {
        "selected": len(selected),
        "warm_us": warm,
        "cold_us": cold,
        "new_scope_us": new_scope,
        "fresh_patterns_us": fresh,
        "naive_us": naive_us,
        "cold_speedup": naive_us / cold,
        "new_scope_speedup": naive_us / new_scope,
        "fresh_patterns_speedup": naive_us / fresh,
    }


def main() -> None:
    figures: dict[str, Any] = {}
    for size in SIZES:
        registry = build(size)
        for skill in SKILLS:
            for key, value in measure(registry, skill, repeat=200 if size < 100_000 else 40).items():
                figures[f"{size // 1000}k_{skill}_{key}"] = value
    figures.update({"target_cold_us_10k": 500.0, "target_cold_us_100k": 2000.0, "target_speedup": 25.0})
    save("registry", figures)


if __name__ == "__main__":
    main()
