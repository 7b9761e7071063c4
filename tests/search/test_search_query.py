"""Reading a query: its own terms at full weight, variants that tools may use instead at less."""

from __future__ import annotations

from toolsift.search._query import STEM_WEIGHT, SYNONYM_WEIGHT, expand

VOCABULARY = dict.fromkeys(["health", "risk", "swarm", "shutdown", "similarity", "stop", "agent", "load"], 0)
STEMS = {"similar": ("similarity",)}


def test_own_terms_count_fully_and_joined_pairs_too() -> None:
    weights = expand("shut the swarm down", VOCABULARY, STEMS)
    assert weights["swarm"] == 1.0 and weights["shutdown"] == 1.0


def test_stem_relatives_and_synonyms_count_less() -> None:
    weights = expand("similar agents halt", VOCABULARY, STEMS)
    assert weights["similarity"] == STEM_WEIGHT and weights["stop"] == SYNONYM_WEIGHT


def test_a_word_that_extends_an_index_term_finds_it() -> None:
    weights = expand("is the swarm healthy or risky", VOCABULARY, STEMS)
    assert weights["health"] == STEM_WEIGHT and weights["risk"] == STEM_WEIGHT


def test_prefixes_shorter_than_four_letters_or_of_known_words_are_not_taken() -> None:
    assert expand("agents", VOCABULARY, STEMS) == {"agent": 1.0}
    assert "sta" not in expand("stat", {"sta": 0}, {})
    assert "swarm" not in expand("swarming", {"swarm": 0, "swarming": 1}, {})
