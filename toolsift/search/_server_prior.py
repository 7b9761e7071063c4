"""A server's reach as a prior for its tools: how much of a query all its tools together meet.

A task names its goal, not the tool: "find the open issues of this repository
and post a summary to the team channel" spans two servers, and the words a
server's tools share ("repository", "issue", "pull request") tell which server
a need belongs to better than any one tool's description does. Each tool's
BM25 score is therefore raised in proportion to how much of the query its
whole server meets (each word weighted by its rarity, as ``strength`` weighs
it), relative to the server that meets most: a tool of the best-matching
server gains :data:`SERVER_PRIOR`, one of a server meeting half as much half
that. Every server keeps its tools, so a task spanning several still finds
each.

Chosen on ETOM's tune split (0.5 to 1.0 moved MRR by +0.005 to +0.007 and
hit@1 by +0.01 over BM25 alone; a prior from the server's best tool score, or
from BM25 over one document per server, or boosting only the top 3 or 5
servers, did no better), then checked on ETOM's held-out split and on
LiveMCPBench (see benchmarks/README.md). The cost per query is one pass over
the arrays of which documents meet each query word, which BM25's coordination
factor computes anyway.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["SERVER_PRIOR", "ServerGroups", "rarity"]

Scores = npt.NDArray[np.float32]
#: How much a tool of the server meeting most of a query gains over one of a server meeting none of it.
SERVER_PRIOR = 0.75


def rarity(met: Sequence[Scores], size: int) -> Scores:
    """Each query concept's weight by how few documents meet it: ``log(1 + documents / documents meeting it)``."""
    counts = np.maximum(1, [np.count_nonzero(m) for m in met])
    return np.log1p(size / counts).astype(np.float32)


class ServerGroups:
    """The documents grouped by server; a document of no server is a group of its own.

    Args:
        servers: Each document's server, in build order (None: no server).
    """

    def __init__(self, servers: Sequence[str | None]) -> None:
        numbers: dict[object, int] = {}
        keys = (server if server is not None else i for i, server in enumerate(servers))
        self._group = np.fromiter((numbers.setdefault(key, len(numbers)) for key in keys), np.intp, len(servers))
        self._order = np.argsort(self._group, kind="stable")
        counts = np.bincount(self._group, minlength=len(numbers))
        self._starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.intp)

    def boost(self, met: Sequence[Scores], weights: Scores) -> Scores:
        """Per document: ``1 + SERVER_PRIOR x`` its server's share of the weighted concepts, over the best server's.

        Args:
            met: Per query concept, how fully each document meets it (0..1).
            weights: Each concept's weight (see :func:`rarity`).
        """
        if not len(self._group) or not len(met):
            return np.ones(len(self._group), dtype=np.float32)
        reach = np.maximum.reduceat(np.stack(met)[:, self._order], self._starts, axis=1)
        share = np.asarray(weights @ reach, dtype=np.float32)
        best = float(share.max())
        if best <= 0:
            return np.ones(len(self._group), dtype=np.float32)
        return np.asarray(1 + np.float32(SERVER_PRIOR / best) * share[self._group], dtype=np.float32)
