"""The default ranking: fielded BM25 over names, summaries, descriptions and parameter names.

No network and no model: the documents' terms (see ``_tokens``) are scored
field by field (see ``_fielded``). A query is read the same way as the
documents, plus variants of its words (see ``_query``).

BM25 adds up what each word scores, so one rare word matched in a name can
outrank a tool that matches every word of the request ("speed up the system
with optimizations" put ``system_reset`` above ``performance_optimize``). Each
score is therefore scaled by the square root of the share of the query's words
(its concepts: a word with its variants) that the tool meets in its name,
summary, description or parameters (a word met only in what its server says of
itself counts half), as Lucene's classic coordination factor did: a tool
meeting two words of three keeps 82 % of its score, one of three 58 %. A tool
whose server's tools together meet more of the query is then raised (see
``_server_prior``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ._documents import SearchDocument
from ._fielded import DEFAULT_WEIGHTS, FieldedIndex, FieldedScorer, FieldWeights
from ._query import expand
from ._server_prior import ServerGroups, rarity

__all__ = ["BM25_WEAK_BELOW", "Bm25Backend", "JudgingRanker", "Ranker", "Scores", "SearchBackend"]

Scores = npt.NDArray[np.float32]
#: The share of a query (its words weighted by rarity) a tool must meet to be more than a weak match.
#: Chosen on the tuning splits (``bench_search.py --weak tune``): the line that keeps about 97 % of the right
#: first hits; a higher one flags more needs no tool meets but calls more right hits weak.
BM25_WEAK_BELOW = 0.12


class Ranker(Protocol):
    """One build of a backend: scores queries against the documents it was built from.

    A ranker may also judge how well each document meets a query
    (:class:`JudgingRanker`); search then marks the hits below its line as weak.
    """

    def scores(self, query: str) -> Scores:
        """One relevance score per document, in build order; 0 means "does not match at all"."""
        ...


@runtime_checkable
class JudgingRanker(Ranker, Protocol):
    """A ranker that also says how fully each document meets a query, on a scale of its own."""

    #: Below this strength a document does not meet the query (a need no tool meets finds only such).
    weak_below: float

    def strength(self, query: str) -> Scores:
        """How fully each document meets ``query``: comparable with :attr:`weak_below`, not across rankers."""
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
    weak_below = BM25_WEAK_BELOW

    def __init__(self, scorer: FieldedScorer, servers: ServerGroups) -> None:
        self._scorer = scorer
        self._servers = servers

    def scores(self, query: str) -> Scores:
        """BM25, scaled by the share of the query's concepts met and raised by the server's (see ``_server_prior``)."""
        scorer = self._scorer
        read = expand(query, scorer.vocabulary, scorer.stems)
        scores = scorer.scores(read.weights)
        if len(read.concepts) > 1:
            met = [scorer.meeting(concept) for concept in read.concepts]
            scores *= np.sqrt(np.sum(met, axis=0, dtype=np.float32) / len(read.concepts))
            scores *= self._servers.boost(met, rarity(met, scorer.size))
        return scores

    def strength(self, query: str) -> Scores:
        """The share of the query's concepts each document meets, each weighted by its rarity (idf).

        A concept no document meets weighs most: a request for something the
        catalogue lacks stays weak however well its common words match.
        """
        scorer = self._scorer
        read = expand(query, scorer.vocabulary, scorer.stems)
        if not read.concepts or not scorer.size:
            return np.zeros(scorer.size, dtype=np.float32)
        met = [scorer.meeting(concept) for concept in read.concepts]
        weights = rarity(met, scorer.size)
        return np.asarray(np.tensordot(weights, np.stack(met), axes=1) / weights.sum(), dtype=np.float32)


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
        return _Bm25Ranker(self._index.build(documents), ServerGroups([doc.server for doc in documents]))
