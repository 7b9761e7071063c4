"""The default ranking: fielded BM25 over names, summaries, descriptions and parameter names.

No network and no model: the documents' terms (see ``_tokens``) are scored
field by field (see ``_fielded``). A query is read the same way as the
documents, plus one addition: two query words, in their order, are also tried
as one word, since people write apart what names write together ("shut the
swarm down" for ``shutdown``, "back it up" for ``backup``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ._documents import SearchDocument
from ._fielded import DEFAULT_WEIGHTS, FieldedIndex, FieldedScorer, FieldWeights
from ._query import expand

__all__ = ["Bm25Backend", "Ranker", "Scores", "SearchBackend"]

Scores = npt.NDArray[np.float32]


class Ranker(Protocol):
    """One build of a backend: scores queries against the documents it was built from."""

    def scores(self, query: str) -> Scores:
        """One relevance score per document, in build order; 0 means "does not match at all"."""
        ...


class SearchBackend(Protocol):
    """A ranking function over the index's documents.

    ``build`` may run in a worker thread while rankers of earlier builds
    answer queries; the index never runs two builds at once, so a backend may
    keep caches between builds without a lock.
    """

    name: str

    def build(self, documents: Sequence[SearchDocument]) -> Ranker:
        """A ranker over ``documents``."""
        ...


class _Bm25Ranker:
    def __init__(self, scorer: FieldedScorer) -> None:
        self._scorer = scorer

    def scores(self, query: str) -> Scores:
        return self._scorer.scores(expand(query, self._scorer.vocabulary, self._scorer.stems))


class Bm25Backend:
    """Fielded BM25 (Lucene variant): one index per field, scores added with a weight per field.

    Args:
        weights: Weight of each document field (``name``, ``summary``,
            ``description``, ``parameters``, ``server``).
        k1: Term-frequency saturation.
        b: Length normalisation.

    Raises:
        ValueError: A weight names an unknown field.
    """

    name = "bm25"

    def __init__(self, *, weights: FieldWeights = DEFAULT_WEIGHTS, k1: float = 1.2, b: float = 0.75) -> None:
        self._index = FieldedIndex(weights=weights, k1=k1, b=b)

    def build(self, documents: Sequence[SearchDocument]) -> Ranker:
        """A ranker over ``documents``; term ids of documents seen by the last build are reused."""
        return _Bm25Ranker(self._index.build(documents))
