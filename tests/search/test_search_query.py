"""Reading a query: its own terms at full weight, variants that tools may use instead at less, its concepts."""

from __future__ import annotations

from toolsift.search._query import QUESTION_WEIGHT, READING, STEM_WEIGHT, SYNONYM_WEIGHT, expand

VOCABULARY = dict.fromkeys(["health", "risk", "swarm", "shutdown", "similarity", "stop", "agent", "load"], 0)
STEMS = {"similar": ("similarity",)}


def test_own_terms_count_fully_and_joined_pairs_too() -> None:
    read = expand("shut the swarm down", VOCABULARY, STEMS)
    assert read.weights["swarm"] == 1.0 and read.weights["shutdown"] == 1.0
    # "shutdown" meets both words it joins.
    assert set(read.concepts) == {
        frozenset({"shut", "shutdown"}),
        frozenset({"swarm"}),
        frozenset({"down", "shutdown"}),
    }


def test_stem_relatives_and_synonyms_count_less() -> None:
    read = expand("similar agents halt", VOCABULARY, STEMS)
    assert read.weights["similarity"] == STEM_WEIGHT and read.weights["stop"] == SYNONYM_WEIGHT
    assert frozenset({"halt", "stop", "shutdown"}) in read.concepts
    assert frozenset({"similar", "similarity"}) in read.concepts


def test_a_word_that_extends_an_index_term_finds_it() -> None:
    weights = expand("is the swarm healthy or risky", VOCABULARY, STEMS).weights
    assert weights["health"] == STEM_WEIGHT and weights["risk"] == STEM_WEIGHT


def test_prefixes_shorter_than_four_letters_or_of_known_words_are_not_taken() -> None:
    assert expand("agents", VOCABULARY, STEMS).weights == {"agent": 1.0}
    assert "sta" not in expand("stat", {"sta": 0}, {}).weights
    assert "swarm" not in expand("swarming", {"swarm": 0, "swarming": 1}, {}).weights


def test_a_question_leans_to_the_verbs_tools_read_with() -> None:
    vocabulary = dict.fromkeys(["workflow", "list", "status", "stop"], 0)
    for question in ("what workflows exist", "workflows running?", "Is my workflow done"):
        read = expand(question, vocabulary, {})
        assert read.weights["list"] == read.weights["status"] == QUESTION_WEIGHT, question
        assert "stop" not in read.weights
        # Leaning is not a word of the question: it meets no concept.
        assert not any("list" in concept for concept in read.concepts)
    assert set(expand("stop the workflows", vocabulary, {}).weights) == {"stop", "workflow"}
    assert {"list", "status", "get"} <= set(READING)
