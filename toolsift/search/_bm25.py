"""The default ranking: BM25 over the documents' terms, with ``bm25s``.

``bm25s`` (numpy only, in process, no network) is used rather than ``rank-bm25``
because it scores eagerly: building the index computes every (term, document)
score once into a sparse matrix, so a query is a sum of a few matrix columns
(about 0.1 ms for 10,000 tools), where ``rank-bm25`` walks every document in
Python on every query. ``bm25s`` has no per-document update, so a change means
a rebuild; term ids are kept across rebuilds and each document's terms are
computed once (see ``SearchIndex``), which keeps a 10,000-tool rebuild near
0.3 s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import bm25s
import numpy as np
import numpy.typing as npt

from ._documents import SearchDocument
from ._tokens import terms

__all__ = ["Bm25Backend", "Scores", "SearchBackend"]

Scores = npt.NDArray[np.float32]


class SearchBackend(Protocol):
    """A ranking function over the index's documents.

    ``build`` is called with every document whenever the index changed;
    ``scores`` then returns one score per document, in the same order, with
    0 meaning "does not match at all".
    """

    name: str

    def build(self, documents: Sequence[SearchDocument]) -> None:
        """Index ``documents``, replacing what was indexed before."""
        ...

    def scores(self, query: str) -> Scores:
        """One relevance score per document of the last build."""
        ...


class Bm25Backend:
    """BM25 (Lucene variant) over the terms of each document.

    Args:
        k1: Term-frequency saturation; lower suits short documents such as tool descriptions.
        b: Length normalisation.
    """

    name = "bm25"

    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
        self._k1 = k1
        self._b = b
        self._vocabulary: dict[str, int] = {}
        self._retriever: Any = None
        self._size = 0

    def build(self, documents: Sequence[SearchDocument]) -> None:
        """Rebuild the score matrix; term ids persist, so only new terms are numbered."""
        vocabulary = self._vocabulary
        ids = [[vocabulary.setdefault(term, len(vocabulary)) for term in doc.terms] for doc in documents]
        self._size = len(documents)
        if not any(ids):
            self._retriever = None
            return
        retriever = bm25s.BM25(k1=self._k1, b=self._b, method="lucene")
        # Our own vocabulary is passed so that term ids stay stable; bm25s would add
        # an empty-query token to it, which the scoring below has no use for.
        retriever.index((ids, dict(vocabulary)), create_empty_token=False, show_progress=False)
        self._retriever = retriever

    def scores(self, query: str) -> Scores:
        """BM25 scores of ``query`` against every document of the last build."""
        if self._retriever is None:
            return np.zeros(self._size, dtype=np.float32)
        # Terms outside the vocabulary (or seen only after the last build) match nothing.
        known = self._retriever.vocab_dict
        ids = [known[term] for term in terms(query) if term in known]
        if not ids:
            return np.zeros(self._size, dtype=np.float32)
        return np.asarray(self._retriever.get_scores_from_ids(ids), dtype=np.float32)
