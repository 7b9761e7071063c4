"""The prompt-cache benchmark's figures: what each agent's requests cost and kept cached, and how they print."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from _provider import Request, count_tokens

from toolsift.agent import Usage
from toolsift.agent._compact import compact_declaration  # what the agent loop sends the model
from toolsift.registry import TurnScope
from toolsift.toolbox import Toolbox

__all__ = ["Figures", "Ran", "print_compaction", "print_row"]


@dataclass(frozen=True)
class Ran:
    """What a runner reports: a note (the rules toolsift applied), the usage the replies reported (priced
    by the adapter's table), and how many requests each step of the session made."""

    note: str
    spent: Usage
    requests: tuple[int, ...]


@dataclass(frozen=True)
class Figures:
    """One agent's figures over the session's requests, as the loopback provider counted them."""

    requests: int
    tool_tokens: float
    loaded_tokens: float
    input_tokens: int
    cost: float
    last10: float
    cached: float
    usd: float | None = None
    unuse: tuple[tuple[int, int], ...] = ()  # tool tokens before each stretch's first /use, and after its /unuse
    note: str = ""

    @classmethod
    def of(cls, requests: Sequence[Request], session: Sequence[str], ran: Ran) -> Figures:
        usages = [r.usage for r in requests]
        total = sum(u.input_tokens for u in usages)
        pairs = _use_pairs(session, ran.requests)
        return cls(
            len(usages),
            sum(u.tool_tokens for u in usages) / len(usages),
            sum(u.loaded_tokens for u in usages) / len(usages),
            total,
            sum(u.cost for u in usages),
            sum(u.cost for u in usages[-10:]),
            sum(u.cache_read for u in usages) / total,
            ran.spent.cost,
            tuple((usages[before].tool_tokens, usages[after].tool_tokens) for before, after in pairs),
            ran.note,
        )


def _use_pairs(session: Sequence[str], requests: Sequence[int]) -> list[tuple[int, int]]:
    """For each ``/unuse``: the index of the last request before the first ``/use`` of the skills it ends,
    and of the first request after it (both messages' requests, in session order)."""
    done = [sum(requests[: i + 1]) for i in range(len(session))]  # requests made once each step is over
    pairs, start = [], None
    for index, text in enumerate(session):
        if text.startswith("/use") and start is None:
            start = index
        elif text == "/unuse" and start is not None and done[start] > 0 and done[index] < done[-1]:
            pairs.append((done[start] - 1, done[index]))
            start = None
    return pairs


def print_row(row: str, label: str, ours: Figures, naive: Figures, goal: tuple[float, float] | None) -> dict[str, Any]:
    """Print one provider's figures beside the naive agent's, and against ``goal`` (cost ratio, share cached)
    when given; return the ones to save."""
    ratio, last = ours.cost / naive.cost, ours.last10 / naive.last10
    print(f"\n{label}")
    print(f"  {'':34}{'toolsift':>14}{'naive agent':>14}")
    print(f"  {'requests':34}{ours.requests:>14,}{naive.requests:>14,}")
    print(f"  {'tool tokens per request':34}{ours.tool_tokens:>14,.0f}{naive.tool_tokens:>14,.0f}")
    if ours.loaded_tokens:
        up_front = ours.tool_tokens - ours.loaded_tokens
        print(f"  {'  of which loaded in the messages':34}{ours.loaded_tokens:>14,.0f}   (up front: {up_front:,.0f})")
    if ours.unuse:
        pairs = ", ".join(f"{before:,} -> {after:,}" for before, after in ours.unuse)
        print(f"  {'  before /use -> after /unuse':34}{pairs:>14}")
    print(f"  {'input tokens':34}{ours.input_tokens:>14,}{naive.input_tokens:>14,}")
    print(f"  {'effective input cost':34}{ours.cost:>14,.0f}{naive.cost:>14,.0f}   toolsift {ratio:.2f}x")
    print(f"  {'last 10 requests':34}{ours.last10:>14,.0f}{naive.last10:>14,.0f}   toolsift {last:.2f}x")
    print(f"  {'input tokens read from cache':34}{ours.cached:>14.1%}{naive.cached:>14.1%}")
    if ours.usd is not None and naive.usd is not None:
        print(f"  {'the bill (USD, the price table)':34}{ours.usd:>14.4f}{naive.usd:>14.4f}")
    unuse = all(after <= before for before, after in ours.unuse)
    if goal is not None:
        goal_ratio, goal_cached = goal
        met = ratio <= goal_ratio and ours.cached >= goal_cached and unuse
        print(
            f"  goal (<= {goal_ratio:.2f}x the naive cost, >= {goal_cached:.0%} cached, tool tokens after /unuse "
            f"<= before /use): {'meets' if met else 'misses'}"
        )
    if ours.note:
        print(f"  {ours.note}")
    return {
        f"{row}_tool_tokens": ours.tool_tokens,
        f"{row}_loaded_tool_tokens": ours.loaded_tokens,
        f"{row}_tool_tokens_before_use": [before for before, _ in ours.unuse],
        f"{row}_tool_tokens_after_unuse": [after for _, after in ours.unuse],
        f"{row}_naive_tool_tokens": naive.tool_tokens,
        f"{row}_cost_ratio": ratio,
        f"{row}_last10_ratio": last,
        f"{row}_cached_share": ours.cached,
        f"{row}_naive_cached_share": naive.cached,
        f"{row}_usd": ours.usd,
        f"{row}_naive_usd": naive.usd,
    }


def print_compaction(box: Toolbox, everything: TurnScope) -> dict[str, Any]:
    """Each server's tool definitions as exported and as the model is sent them (compact), in tokens
    (``everything``: a scope that shows every tool)."""
    print("tool definitions per server, exported -> sent compact (Anthropic format):")
    figures: dict[str, Any] = {}
    for server in sorted({tool.spec.server or "" for tool in box.registry} - {""}):
        names = {tool.spec.name for tool in box.registry.tools(server=server)}
        visible = [tool.spec.name for tool in box.registry.visible_tools(everything)]
        exported = box.registry.schemas_for_tools(everything, "anthropic")
        pairs = [(name, schema) for name, schema in zip(visible, exported, strict=True) if name in names]
        before = sum(count_tokens(json.dumps(schema, separators=(",", ":"))) for _, schema in pairs)
        after = sum(
            count_tokens(json.dumps(compact_declaration(schema, name.partition("__")[2]), separators=(",", ":")))
            for name, schema in pairs
        )
        print(f"  {server:14}{len(pairs):>5} tools {before:>9,} -> {after:>9,} ({1 - after / before:.1%} fewer)")
        figures[f"compaction_{server}_saved_share"] = 1 - after / before
    return figures
