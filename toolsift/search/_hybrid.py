"""``hybrid``: BM25 and embeddings fused by reciprocal rank fusion.

Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009) adds ``1 / (k +
rank)`` over the rankings a document appears in. It needs no calibration
between BM25 scores (unbounded) and cosine similarities (0..1), which a
weighted sum of raw scores would, and a document that both rankings place
high beats one that only one of them likes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._bm25 import JudgingRanker, Ranker, Scores, SearchBackend
from ._documents import SearchDocument

__all__ = ["HybridBackend"]

# The usual constant: it damps the difference between the first few places.
RRF_K = 60
# Each ranking contributes its best documents only: the tail of an embedding
# ranking (every document has some similarity) is noise.
DEPTH = 50


def _fuse(rankings: Sequence[Scores], k: int, depth: int) -> Scores:
    fused = np.zeros(len(rankings[0]) if rankings else 0, dtype=np.float32)
    for scores in rankings:
        positive = np.flatnonzero(scores > 0)
        best = positive[np.argsort(-scores[positive], kind="stable")][:depth]
        fused[best] += 1.0 / (k + np.arange(1, len(best) + 1, dtype=np.float32))
    return fused


class _FusedRanker:
    #: Strengths are each member's over its own line: at 1 or above, some member finds the document meets it.
    weak_below = 1.0

    def __init__(self, rankers: Sequence[Ranker], k: int, depth: int) -> None:
        self._rankers = rankers
        self._k = k
        self._depth = depth

    def scores(self, query: str) -> Scores:
        return _fuse([ranker.scores(query) for ranker in self._rankers], self._k, self._depth)

    def strength(self, query: str) -> Scores:
        """The best of the members' strengths, each over its own line: weak only when every member finds it weak."""
        judged = [r.strength(query) / r.weak_below for r in self._rankers if isinstance(r, JudgingRanker)]
        if not judged:  # no member judges: nothing is called weak
            return np.full(len(self.scores(query)), np.inf, dtype=np.float32)
        best: Scores = np.max(judged, axis=0).astype(np.float32)
        return best


class HybridBackend:
    """Reciprocal rank fusion of several backends (BM25 and semantic, as ``hybrid`` builds it).

    Args:
        backends: The rankings to fuse.
        k: The RRF constant.
        depth: How many of each ranking's best documents take part.

    Raises:
        ValueError: No backend, or ``k``/``depth`` below 1.
    """

    name = "hybrid"

    def __init__(self, *backends: SearchBackend, k: int = RRF_K, depth: int = DEPTH) -> None:
        if not backends or k < 1 or depth < 1:
            raise ValueError(
                f"need at least one backend, k >= 1 and depth >= 1, got {len(backends)} backend(s), "
                f"k={k!r}, depth={depth!r}"
            )
        self._backends = backends
        self._k = k
        self._depth = depth

    def build(self, documents: Sequence[SearchDocument]) -> Ranker:
        """Build every backend over ``documents``."""
        return _FusedRanker([backend.build(documents) for backend in self._backends], self._k, self._depth)
