"""A breakpoint on an earlier cache entry that the request's own breakpoints cannot reach.

Anthropic writes a cache entry at each ``cache_control`` breakpoint and reads one only at a
breakpoint's own block or one of the 19 blocks before it. A conversation that comes back to a tool
list it had before (``/unuse`` after ``/use``, the same skill again) sends a prompt whose start
equals a prompt sent many requests ago, up to that request's last message; its breakpoints sit on
the newest blocks, too far after that entry to find it, and the prompt is written again from the
system prompt on. :class:`EarlierEntries` remembers where this model's requests put breakpoints
(a digest of the prompt up to each) and, when a request starts with such a prefix beyond the reach
of its breakpoints, puts one there, in place of the earliest breakpoint before it (a shorter
prefix of the same entry) when all four are taken.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from typing import Any, final

from ..._tokens import estimated_tokens

__all__ = ["EarlierEntries"]

#: A breakpoint finds an earlier cache entry at its own block or one of the 19 before it.
LOOKBACK = 20
#: Breakpoints a request may carry.
MAX_BREAKPOINTS = 4
#: Anthropic caches no prefix shorter than this (Claude Sonnet and Opus; some models need more).
MIN_CACHEABLE = 1024


@final
class EarlierEntries:
    """The prefixes this model's earlier requests put breakpoints on (the newest ``remembered``)."""

    def __init__(self, remembered: int = 64) -> None:
        self._remembered = remembered
        self._digests: OrderedDict[str, None] = OrderedDict()

    def mark(self, request: dict[str, Any]) -> None:
        """Add a breakpoint to ``request`` (a Messages API request) on the longest earlier entry it
        starts with, when none of its breakpoints reaches it; then remember its own breakpoints."""
        blocks = _prompt_blocks(request)
        digests, sizes = _running(blocks)
        marked = [i for i, (holder, at, _) in enumerate(blocks) if "cache_control" in holder[at]]
        deep = max((i for i, digest in enumerate(digests) if digest in self._digests), default=-1)
        if deep >= 0 and not any(deep <= j < deep + LOOKBACK for j in marked):
            earlier = [j for j in marked if j < deep]
            if len(marked) >= MAX_BREAKPOINTS and earlier:
                holder, at, _ = blocks[earlier[0]]
                holder[at] = {k: v for k, v in holder[at].items() if k != "cache_control"}
                marked.remove(earlier[0])
            if len(marked) < MAX_BREAKPOINTS:
                holder, at, _ = blocks[deep]
                holder[at] = {**holder[at], "cache_control": {"type": "ephemeral"}}
                marked.append(deep)
        for index in marked:
            if sizes[index] >= MIN_CACHEABLE:
                self._digests[digests[index]] = None
                self._digests.move_to_end(digests[index])
        while len(self._digests) > self._remembered:
            self._digests.popitem(last=False)


Block = tuple[list[dict[str, Any]], int, str]


def _prompt_blocks(request: dict[str, Any]) -> list[Block]:
    """The prompt's blocks in cache order (tools loaded up front, system, message content), as
    (the list holding it, its index, what it opens: a message's role or ''), so a breakpoint can be
    set or taken off in place."""
    tools: list[dict[str, Any]] = request.get("tools") or []
    blocks: list[Block] = [(tools, i, "") for i, tool in enumerate(tools) if not tool.get("defer_loading")]
    system = request.get("system")
    if isinstance(system, list):
        blocks += [(system, i, "") for i in range(len(system))]
    for message in request.get("messages") or []:
        content = message["content"]
        if isinstance(content, list):
            blocks += [(content, i, "" if i else message["role"]) for i in range(len(content))]
    return blocks


def _running(blocks: list[Block]) -> tuple[list[str], list[int]]:
    """A digest of the prompt up to each block (breakpoints left out), and its estimated tokens."""
    digest = hashlib.sha256()
    digests: list[str] = []
    sizes: list[int] = []
    total = 0
    for holder, at, opens in blocks:
        block = {k: v for k, v in holder[at].items() if k != "cache_control"}
        digest.update(opens.encode() + b"\x01")
        text = json.dumps(block, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        digest.update(text.encode() + b"\x00")
        total += estimated_tokens(text)
        digests.append(digest.copy().hexdigest())
        sizes.append(total)
    return digests, sizes
