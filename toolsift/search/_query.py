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
- :data:`SYNONYMS`: groups of words that tool names and descriptions use for the
  same action or thing (``start``/``initialize``, ``remove``/``delete``,
  ``log``/``history``);
- for a question ("what workflows exist", "is my workflow done yet"), the verbs
  tools read with (:data:`READING`): a question asks to read, and without a verb
  of its own it would rank ``workflow_stop`` as high as ``workflow_list``.

Each own word and its variants form one *concept*: the ranking prefers tools
that meet more of a query's concepts (see ``_bm25``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

import Stemmer

from ._tokens import split_words, terms

__all__ = ["READING", "SYNONYMS", "QueryTerms", "expand", "stem"]

STEM_WEIGHT = 0.8
SYNONYM_WEIGHT = 0.4
QUESTION_WEIGHT = 0.3
# Words of a query tried in pairs: a long query would make pairs by the hundred.
_MAX_JOINED = 12

#: Words that tool vocabularies use for one action or one thing; a query word finds the others, weakly.
SYNONYMS: tuple[tuple[str, ...], ...] = (
    # actions
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
    ("compare", "diff", "difference"),
    ("export", "dump"),
    ("import", "ingest"),
    ("restore", "recover", "rollback", "revert", "undo"),
    ("reset", "clear", "flush"),
    ("pause", "suspend"),
    ("resume", "unpause", "continue"),
    ("approve", "accept"),
    ("reject", "deny", "decline"),
    ("monitor", "watch", "observe", "track"),
    ("summarize", "summary", "overview"),
    ("recommend", "suggest", "advise"),
    ("describe", "explain", "detail", "information"),
    ("merge", "combine"),
    ("sort", "order", "rank"),
    ("count", "total", "tally"),
    ("optimize", "improve", "tune"),
    ("authenticate", "login", "signin"),
    ("upload", "push"),
    ("download", "pull"),
    ("schedule", "plan"),
    ("assign", "allocate"),
    # things
    ("configuration", "setting", "option", "preference"),
    ("statistic", "metric", "usage"),
    ("status", "state"),
    ("log", "history"),
    ("directory", "folder"),
    ("error", "failure", "fault"),
)
#: What tools that read are named with; a question finds them, weakly.
READING = ("get", "list", "show", "status", "information", "statistic")
# Words a question opens with.
_ASKING = frozenset(
    {
        "what",
        "which",
        "who",
        "where",
        "when",
        "how",
        "is",
        "are",
        "was",
        "were",
        "does",
        "do",
        "did",
        "has",
        "have",
        "can",
    }
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


@dataclass(frozen=True)
class QueryTerms:
    """A query as the index reads it.

    Attributes:
        weights: Every term tried, with its weight.
        concepts: For each distinct own word, the terms that count as meeting it:
            the word, its variants, and the joined pairs it is part of.
    """

    weights: dict[str, float]
    concepts: tuple[frozenset[str], ...]


def expand(query: str, vocabulary: Mapping[str, int], stems: Mapping[str, Iterable[str]]) -> QueryTerms:
    """Terms of ``query`` with their weights: its own (1), joined pairs (1), stem relatives, synonyms.

    Args:
        query: The query text.
        vocabulary: Terms the index holds; variants outside it are left out.
        stems: Stem -> index terms with that stem.
    """
    own = list(dict.fromkeys(terms(query)))
    weights = dict.fromkeys(own, 1.0)
    concepts = {term: {term} for term in own}
    words = split_words(query)[:_MAX_JOINED]
    for i, first in enumerate(words):
        for second in words[i + 1 :]:
            if (joined := first + second) in vocabulary:
                weights[joined] = 1.0
                for part in (*terms(first), *terms(second)):
                    concepts.get(part, set()).add(joined)
    for term in own:
        variants = list(stems.get(stem(term), ()))
        if term not in vocabulary and (base := _vocabulary_prefix(term, vocabulary)) is not None:
            variants.append(base)
        synonyms = [synonym for synonym in _SYNONYMS_OF.get(term, ()) if synonym in vocabulary]
        for variant in variants:
            weights.setdefault(variant, STEM_WEIGHT)
        for synonym in synonyms:
            weights.setdefault(synonym, SYNONYM_WEIGHT)
        concepts[term].update(variants, synonyms)
    if words and (words[0] in _ASKING or query.rstrip().endswith("?")):
        for verb in READING:
            if verb in vocabulary:
                weights.setdefault(verb, QUESTION_WEIGHT)
    return QueryTerms(weights, tuple(frozenset(met) for met in concepts.values()))
