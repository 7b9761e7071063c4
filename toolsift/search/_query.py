"""Reading a query: its own terms, and weaker variants of them that tools may use instead.

A query's own words count fully. People write a need in other words than the
tool's author, so three kinds of variants are added, each with a lower weight
so that they reorder close calls without outvoting the query's own words:

- two query words written as one (``shut the swarm down`` -> ``shutdown``), at full
  weight since that is the same word;
- words of the index that share the query word's stem (``similar`` ->
  ``similarity``, ``setting`` -> ``set``): indexing stems outright merges words
  that tell tools apart (``execute``/``executor``) and cost first places;
- for a query word the index does not hold, the index word it extends by one
  to three letters (``healthy`` -> ``health``, ``risky`` -> ``risk``), which
  the stemmer leaves apart;
- :data:`SYNONYMS`: groups of verbs that tool names and descriptions use for the
  same action (``start``/``initialize``, ``remove``/``delete``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

import Stemmer

from ._tokens import split_words, terms

__all__ = ["SYNONYMS", "expand", "stem"]

STEM_WEIGHT = 0.5
SYNONYM_WEIGHT = 0.4
# Words of a query tried in pairs: a long query would make pairs by the hundred.
_MAX_JOINED = 12

#: Verbs that name one action in tool vocabularies; a query word finds the others, weakly.
SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("create", "new", "make", "add"),
    ("start", "begin", "launch", "initialize", "init", "open"),
    ("stop", "halt", "end", "terminate", "kill", "shutdown", "close"),
    ("delete", "remove", "erase", "drop", "destroy", "purge"),
    ("get", "fetch", "retrieve", "read", "load", "obtain"),
    ("show", "display", "view", "inspect"),
    ("list", "enumerate"),
    ("find", "search", "lookup", "locate", "query"),
    ("update", "change", "modify", "edit", "alter", "set"),
    ("run", "execute", "invoke", "trigger", "perform"),
    ("save", "store", "persist", "remember"),
    ("check", "verify", "validate"),
    ("send", "notify", "broadcast", "publish", "post"),
    ("copy", "clone", "duplicate"),
    ("cancel", "abort"),
    ("enable", "activate"),
    ("disable", "deactivate"),
)
_SYNONYMS_OF: dict[str, frozenset[str]] = {}
for _group in SYNONYMS:
    for _word in _group:
        _SYNONYMS_OF[_word] = _SYNONYMS_OF.get(_word, frozenset()) | (frozenset(_group) - {_word})

_STEMMER = Stemmer.Stemmer("english")


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Snowball English stem of ``word``."""
    return str(_STEMMER.stemWord(word))


def _vocabulary_prefix(word: str, vocabulary: Mapping[str, int]) -> str | None:
    """The longest index term that ``word`` extends by one to three letters (``healthy`` -> ``health``)."""
    for cut in range(1, 4):
        base = word[:-cut]
        if len(base) < 4:
            return None
        if base in vocabulary:
            return base
    return None


def expand(query: str, vocabulary: Mapping[str, int], stems: Mapping[str, Iterable[str]]) -> dict[str, float]:
    """Terms of ``query`` with their weights: its own (1), joined pairs (1), stem relatives, synonyms.

    Args:
        query: The query text.
        vocabulary: Terms the index holds; variants outside it are left out.
        stems: Stem -> index terms with that stem.
    """
    own = terms(query)
    weights = dict.fromkeys(own, 1.0)
    words = split_words(query)[:_MAX_JOINED]
    for i, first in enumerate(words):
        for second in words[i + 1:]:
            if (joined := first + second) in vocabulary:
                weights[joined] = 1.0
    for term in own:
        for relative in stems.get(stem(term), ()):
            weights.setdefault(relative, STEM_WEIGHT)
        if term not in vocabulary and (base := _vocabulary_prefix(term, vocabulary)) is not None:
            weights.setdefault(base, STEM_WEIGHT)
        for synonym in _SYNONYMS_OF.get(term, ()):
            if synonym in vocabulary:
                weights.setdefault(synonym, SYNONYM_WEIGHT)
    return weights
