"""Turning tool names, descriptions and queries into index terms.

Names are split the way people read them: ``claude-flow__memory_store`` gives
``claude flow memory store`` and ``listMcpResources`` gives ``list mcp
resources``. Every word is lower-cased, common English filler words are
dropped, and what remains is stemmed with the Snowball English stemmer
(PyStemmer: a C extension from PyPI, no data download), so ``storing``,
``stores`` and ``store`` meet in one term.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS

__all__ = ["split_words", "terms"]

# Runs of letters and digits; everything else (``_``, ``-``, ``.``, ``/``, spaces) separates words.
_RUN = re.compile(r"[^\W_]+")
# Word boundaries inside a run: lower then upper (``listMcp``), the end of an acronym
# (``MCPResources``), and letters next to digits. ASCII only: other scripts stay whole.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")
# NLTK's English list minus words that tell tools apart (``pre``/``post`` hooks are
# described with "before"/"after"; "up"/"down" scale, "all" clears everything).
_KEEP = frozenset({
    "above", "after", "again", "against", "all", "before", "below", "between", "down", "few", "further",
    "more", "most", "off", "once", "only", "other", "out", "over", "same", "under", "up",
})
_STOPWORDS = frozenset(STOPWORDS_EN_PLUS) - _KEEP | frozenset({"please", "want", "need", "let", "lets", "would"})
_STEMMER = Stemmer.Stemmer("english")


def split_words(text: str) -> list[str]:
    """Lower-cased words of ``text``, splitting identifiers on ``_ - . /`` and camelCase."""
    return [part.lower() for run in _RUN.findall(text) for part in _CAMEL.split(run)]


@lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


def terms(text: str) -> list[str]:
    """Index terms of ``text``: its words without filler words, stemmed, in order."""
    return [_stem(word) for word in split_words(text) if word not in _STOPWORDS]


def weighted(fields: Iterable[tuple[str, int]]) -> list[str]:
    """Terms of several fields, each repeated by its weight.

    Repeating a field's terms is how a single-field BM25 approximates BM25F
    field weights: a word of the tool's name counts as much as several of its
    description.
    """
    out: list[str] = []
    for text, weight in fields:
        out.extend(terms(text) * weight)
    return out
