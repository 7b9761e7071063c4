"""``hybrid``: BM25 and embeddings, each scaled by its best score and added with a weight.

BM25 scores are unbounded and cosine similarities lie in 0..1, so neither is
added as it stands: each ranking's scores are divided by its best for the
query, which puts its first document at 1 and keeps how far behind the others
are. Reciprocal rank fusion, used before, kept only the order: a document
BM25 placed far ahead counted no more than one it barely preferred. On ETOM's
tune split the scaled sum put a right tool first more often (hit@1 0.85 ->
0.86; 0.88 with the server's text on the semantic side, see ``_semantic``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._bm25 import Bm25Backend, JudgingRanker, Ranker, Scores, SearchBackend
from ._documents import SearchDocument

__all__ = ["BM25_SEMANTIC", "HybridBackend", "bm25_and"]

#: The weights of BM25 and of the semantic ranking in ``hybrid``, chosen on ETOM's tune split (0.5 to 0.8
#: for BM25 moved its hit@5 by under 0.01; 0.6 had the best MRR).
BM25_SEMANTIC = (0.6, 0.4)


def _fuse(rankings: Sequence[Scores], weights: Sequence[float]) -> Scores:
    fused = np.zeros(len(rankings[0]) if rankings else 0, dtype=np.float32)
    for scores, weight in zip(rankings, weights, strict=True):
        best = float(scores.max()) if len(scores) else 0.0
        if best > 0:
            fused += np.float32(weight / best) * np.clip(scores, 0, None)
    return fused


class _FusedRanker:
    #: Strengths are each member's over its own line: at 1 or above, some member finds the document meets it.
    weak_below = 1.0

    def __init__(self, rankers: Sequence[Ranker], weights: Sequence[float]) -> None:
        self._rankers = rankers
        self._weights = weights

    def scores(self, query: str) -> Scores:
        return _fuse([ranker.scores(query) for ranker in self._rankers], self._weights)

    def strength(self, query: str) -> Scores:
        """The best of the members' strengths, each over its own line: weak only when every member finds it weak."""
        judged = [r.strength(query) / r.weak_below for r in self._rankers if isinstance(r, JudgingRanker)]
        if not judged:  # no member judges: nothing is called weak
            return np.full(len(self.scores(query)), np.inf, dtype=np.float32)
        best: Scores = np.max(judged, axis=0).astype(np.float32)
        return best


class HybridBackend:
    """The sum of several backends' scores, each divided by its best for the query and weighted.

    Args:
        backends: The rankings to fuse (``hybrid`` fuses BM25 and semantic, weighted 0.6 and 0.4).
        weights: One weight per backend, each above 0; None weighs them equally.

    Raises:
        ValueError: No backend, or weights that are not one positive number per backend.
    """

    name = "hybrid"

    def __init__(self, *backends: SearchBackend, weights: Sequence[float] | None = None) -> None:
        given = tuple(weights) if weights is not None else (1.0,) * len(backends)
        if not backends or len(given) != len(backends) or not all(weight > 0 for weight in given):
            raise ValueError(
                f"need at least one backend and one positive weight for each, got {len(backends)} backend(s) "
                f"and weights {list(given)!r}"
            )
        self._backends = backends
        self._weights = given

    def build(self, documents: Sequence[SearchDocument]) -> Ranker:
        """Build every backend over ``documents``."""
        return _FusedRanker([backend.build(documents) for backend in self._backends], self._weights)


def bm25_and(semantic: SearchBackend) -> HybridBackend:
    """The ``hybrid`` backend: BM25 and ``semantic``, weighted by :data:`BM25_SEMANTIC`."""
    return HybridBackend(Bm25Backend(), semantic, weights=BM25_SEMANTIC)
