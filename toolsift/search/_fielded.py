"""Fielded BM25 in numpy: one BM25 index per field, their scores added with a weight each.

A tool's name says what it does in two or three words; its description says
it again in forty, often naming other tools on the way. Repeating the name's
words in one bag of words (how a single-field index weights a field) is
flattened by BM25's term-frequency saturation: three ``store`` count little
more than one. Scoring each field on its own (its own lengths, its own
document frequencies) and adding the fields' scores with weights keeps a name
match worth several description matches, whatever the description's length.

Written with numpy rather than on ``bm25s`` because an index that follows
``tools/list_changed`` at 10,000 tools must rebuild from cached per-document
term ids in milliseconds: each document's term ids and counts are computed
once (cached by document identity), and a rebuild is a few array
concatenations and one sort per field. ``bm25s`` recomputes everything from
the token lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._documents import FIELDS, SearchDocument
from ._pace import paced
from ._query import stem

__all__ = ["DEFAULT_WEIGHTS", "MEETS", "FieldWeights", "FieldedIndex", "FieldedScorer"]

Scores = npt.NDArray[np.float32]
_Ids = npt.NDArray[np.int32]

#: How much a match in each field counts; a field left out counts nothing.
FieldWeights = Mapping[str, float]
# Term sequences kept between builds; past this the cache starts again (documents that left).
_SEQUENCES = 200_000
#: How fully a tool meets a query's word found in each field. The fields that say what it does and what
#: it takes count fully (a tool whose own description is short or empty often says the rest in its
#: parameters' descriptions); its server's name and description say where it is and hold for every
#: tool of the server, so they count half: enough to find a tool by its server, not to outweigh its own.
MEETS: Mapping[str, float] = {"name": 1.0, "summary": 1.0, "description": 1.0, "parameters": 1.0, "server": 0.5}
DEFAULT_WEIGHTS: FieldWeights = {"name": 1.5, "summary": 1.0, "description": 0.5, "parameters": 0.25, "server": 0.5}


@dataclass(frozen=True)
class _Postings:
    """One field's index: for term ``t``, ``docs[starts[t]:starts[t+1]]`` hold it with ``weights``."""

    starts: npt.NDArray[np.int64]
    docs: _Ids
    weights: Scores

    def add_to(self, scores: Scores, term: int, factor: float) -> None:
        if term + 1 >= len(self.starts):  # a term numbered after this index was built
            return
        begin, end = self.starts[term], self.starts[term + 1]
        scores[self.docs[begin:end]] += factor * self.weights[begin:end]

    def mark(self, found: npt.NDArray[np.bool_], term: int) -> None:
        if term + 1 < len(self.starts):
            found[self.docs[self.starts[term] : self.starts[term + 1]]] = True


def _postings(ids: Sequence[tuple[_Ids, _Ids]], vocabulary: int, k1: float, b: float) -> _Postings:
    """BM25 weights of every (term, document) pair of one field, grouped by term."""
    sizes = np.fromiter((len(terms) for terms, _ in ids), dtype=np.int64, count=len(ids))
    empty = np.zeros(0, dtype=np.int32)
    terms = np.concatenate([t for t, _ in ids]) if sizes.any() else empty
    counts = np.concatenate([c for _, c in ids]).astype(np.float32) if sizes.any() else empty.astype(np.float32)
    docs = np.repeat(np.arange(len(ids), dtype=np.int32), sizes)
    lengths = np.bincount(docs, weights=counts, minlength=len(ids)).astype(np.float32)
    filled = lengths[lengths > 0]
    average = float(filled.mean()) if len(filled) else 1.0
    frequency = np.bincount(terms, minlength=vocabulary).astype(np.float32)
    # Lucene's idf: never negative, so a term in most documents still counts a little.
    idf = np.log1p((len(ids) - frequency + 0.5) / (frequency + 0.5)).astype(np.float32)
    norm = k1 * (1 - b + b * lengths[docs] / average)
    weights = (idf[terms] * counts * (k1 + 1) / (counts + norm)).astype(np.float32)
    order = np.argsort(terms, kind="stable")
    starts = np.zeros(vocabulary + 1, dtype=np.int64)
    np.cumsum(frequency.astype(np.int64), out=starts[1:])
    return _Postings(starts, docs[order], weights[order])


@dataclass(frozen=True)
class FieldedScorer:
    """One build of a :class:`FieldedIndex`: immutable, so queries may run while the next build is made."""

    fields: Mapping[str, _Postings]
    weights: Mapping[str, float]
    vocabulary: Mapping[str, int]
    stems: Mapping[str, tuple[str, ...]]
    size: int

    def scores(self, words: Mapping[str, float]) -> Scores:
        """Per document: the sum over fields and ``words`` of field weight x word weight x BM25 weight."""
        scores = np.zeros(self.size, dtype=np.float32)
        ids = [(i, weight) for word, weight in words.items() if (i := self.vocabulary.get(word)) is not None]
        for field, postings in self.fields.items():
            factor = self.weights[field]
            for term, weight in ids:
                postings.add_to(scores, term, factor * weight)
        return scores

    def meeting(self, words: Iterable[str]) -> Scores:
        """Per document: how fully it meets any of ``words``, the most :data:`MEETS` gives a field holding one."""
        met = np.zeros(self.size, dtype=np.float32)
        ids = [i for word in words if (i := self.vocabulary.get(word)) is not None]
        for field, postings in self.fields.items():
            if MEETS.get(field):
                found = np.zeros(self.size, dtype=np.bool_)
                for term in ids:
                    postings.mark(found, term)
                np.maximum(met, MEETS[field] * found, out=met)
        return met


class FieldedIndex:
    """Builds :class:`FieldedScorer` objects; term ids and per-document counts are cached between builds.

    Builds must not overlap (the search index runs one at a time); scorers of
    earlier builds stay valid.

    Args:
        weights: Each field's weight (see :data:`DEFAULT_WEIGHTS`).
        k1: Term-frequency saturation.
        b: Length normalisation.

    Raises:
        ValueError: A weight names a field documents do not have.
    """

    def __init__(self, *, weights: FieldWeights = DEFAULT_WEIGHTS, k1: float = 1.2, b: float = 0.75) -> None:
        unknown = set(weights) - set(FIELDS)
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(sorted(unknown))}; fields: {', '.join(FIELDS)}")
        self._weights = {field: float(weight) for field, weight in weights.items() if weight}
        self._k1 = k1
        self._b = b
        # Both only ever grow, so a scorer may read them while a build adds terms.
        self._vocabulary: dict[str, int] = {}
        self._stems: dict[str, tuple[str, ...]] = {}
        self._cache: dict[SearchDocument, dict[str, tuple[_Ids, _Ids]]] = {}
        # Term ids by term sequence: the same description on thirty servers is numbered once.
        self._sequences: dict[tuple[str, ...], tuple[_Ids, _Ids]] = {}

    def _number(self, term: str) -> int:
        number = self._vocabulary[term] = len(self._vocabulary)
        root = stem(term)
        self._stems[root] = (*self._stems.get(root, ()), term)
        return number

    def _sequence(self, terms: tuple[str, ...]) -> tuple[_Ids, _Ids]:
        cached = self._sequences.get(terms)
        if cached is None:
            vocabulary = self._vocabulary
            ids = np.fromiter(
                (vocabulary[t] if t in vocabulary else self._number(t) for t in terms), dtype=np.int32, count=len(terms)
            )
            unique, counts = np.unique(ids, return_counts=True)
            cached = self._sequences[terms] = (unique.astype(np.int32), counts.astype(np.int32))
        return cached

    def _ids(self, doc: SearchDocument) -> dict[str, tuple[_Ids, _Ids]]:
        cached = self._cache.get(doc)
        if cached is None:
            cached = {field: self._sequence(doc.fields.get(field, ())) for field in self._weights}
        return cached

    def build(self, documents: Sequence[SearchDocument]) -> FieldedScorer:
        """Index ``documents``; those indexed by the last build reuse their term ids."""
        if len(self._sequences) > _SEQUENCES:
            self._sequences = {}
        cache = {doc: self._ids(doc) for doc in paced(documents)}
        self._cache = cache
        size = len(self._vocabulary)
        fields = {
            field: _postings([cache[doc][field] for doc in documents], size, self._k1, self._b)
            for field in self._weights
        }
        return FieldedScorer(fields, self._weights, self._vocabulary, self._stems, len(documents))
