"""Turning tool names, descriptions and queries into index terms.

Names are split the way people read them: ``claude-flow__memory_store`` gives
``claude flow memory store`` and ``listMcpResources`` gives ``list mcp
resources``. Every word is lower-cased, common English filler words are
dropped, and plurals are folded onto their singular (``entries`` -> ``entry``,
``stores`` -> ``store``). Nothing more is stemmed: a full stemmer
(Snowball) also merges words that tell tools apart (``execute``/``executor``,
``general``/``generate``), which cost more first places than it gained.

Tool vocabularies shorten words (``init``, ``config``, ``stats``, ``env``);
:data:`ABBREVIATIONS` spells the common ones out, so that "initialize the
configuration" finds ``config_init``. It is a list of abbreviations, not of
synonyms: each entry is one word written two ways.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from ._stopwords import STOPWORDS_EN

__all__ = ["identifiers", "name_key", "split_words", "terms"]

# Runs of letters and digits; everything else (``_``, ``-``, ``.``, ``/``, spaces) separates words.
_RUN = re.compile(r"[^\W_]+")
# Word boundaries inside a run: lower then upper (``listMcp``), the end of an acronym
# (``MCPResources``), and letters next to digits. ASCII only: other scripts stay whole.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")
# A word that is written as an identifier: parts joined by ``_``, ``-``, ``.`` or ``__``, or camelCase.
# Possessive runs: a plain word fails at once instead of being retried one letter shorter at a time.
_IDENTIFIER = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]++(?:(?:__|[_\-.])[A-Za-z0-9]++)+"
    r"|[a-z0-9]++(?:[A-Z][a-z0-9]++)+)"
)
# NLTK's English list minus words that tell tools apart (``pre``/``post`` hooks are
# described with "before"/"after"; "up"/"down" scale, "all" clears everything).
_KEEP = frozenset(
    {
        "above",
        "after",
        "again",
        "against",
        "all",
        "before",
        "below",
        "between",
        "down",
        "few",
        "further",
        "more",
        "most",
        "off",
        "once",
        "only",
        "other",
        "out",
        "over",
        "same",
        "under",
        "up",
    }
)
_STOPWORDS = STOPWORDS_EN - _KEEP | frozenset({"please", "want", "need", "let", "lets", "would"})
#: Abbreviations common in tool names, and the word each stands for.
ABBREVIATIONS = {
    "init": "initialize",
    "config": "configuration",
    "cfg": "configuration",
    "conf": "configuration",
    "stats": "statistics",
    "info": "information",
    "env": "environment",
    "repo": "repository",
    "dir": "directory",
    "msg": "message",
    "db": "database",
    "auth": "authentication",
    "del": "delete",
    "rm": "remove",
    "ls": "list",
    "mkdir": "make directory",
    "exec": "execute",
    "args": "arguments",
    "params": "parameters",
    "pr": "pull request",
    "prs": "pull requests",
    "doc": "document",
    "docs": "documents",
    "img": "image",
    "num": "number",
    "tmp": "temporary",
    "sync": "synchronize",
    "async": "asynchronous",
    "perf": "performance",
    "impl": "implementation",
}
# Endings that look plural but are not (``status``, ``class``, ``analysis``, ``always``).
_NOT_PLURAL = ("ss", "us", "is", "ys", "as", "os")


def split_words(text: str) -> list[str]:
    """Lower-cased words of ``text``, splitting identifiers on ``_ - . /`` and camelCase."""
    words: list[str] = []
    for run in _RUN.findall(text):
        # Most words are all lower-case or capitalised: only the others can hold a camelCase boundary.
        if run.isdigit() or (run.isalpha() and run[1:].islower()):
            words.append(run.lower())
        else:
            words.extend(part.lower() for part in _CAMEL.split(run))
    return words


@lru_cache(maxsize=65_536)
def name_key(text: str) -> str:
    """``text`` as a name is compared: ``Memory-Store``, ``memoryStore`` and ``memory store`` -> ``memory_store``."""
    return "_".join(split_words(text))


@lru_cache(maxsize=16_384)
def identifiers(text: str) -> tuple[str, ...]:
    """Words of ``text`` written as identifiers (``memory_store``, ``get-sum``, ``listTools``)."""
    return tuple(_IDENTIFIER.findall(text))


@lru_cache(maxsize=65_536)
def _fold(word: str) -> str:
    """The singular of a regular English plural; other words unchanged."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(_NOT_PLURAL):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes")):
        return word[:-2]
    return word[:-1]


def _expand(words: Iterable[str]) -> Iterable[str]:
    for word in words:
        full = ABBREVIATIONS.get(word)
        if full is None:
            yield word
        else:
            yield word
            yield from full.split()


@lru_cache(maxsize=65_536)
def terms_of(text: str) -> tuple[str, ...]:
    """Index terms of ``text`` (cached: identical descriptions on many servers are read once)."""
    return tuple(_fold(word) for word in _expand(split_words(text)) if word not in _STOPWORDS)


def terms(text: str) -> list[str]:
    """Index terms of ``text``: its words without filler words, plurals folded, abbreviations spelled out."""
    return list(terms_of(text))
