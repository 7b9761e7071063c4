"""Globs: `*` and `?` only, whole-name, case-sensitive, compiled once."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolsift import InvalidPattern
from toolsift._globs import compile_patterns, literal_server, validate_pattern
from toolsift.registry._name_index import NameIndex


def reference_match(pattern: str, name: str) -> bool:
    """The obvious recursive definition, for comparison."""
    if not pattern:
        return not name
    head, rest = pattern[0], pattern[1:]
    if head == "*":
        return any(reference_match(rest, name[i:]) for i in range(len(name) + 1))
    if not name:
        return False
    if head == "?" or head == name[0]:
        return reference_match(rest, name[1:])
    return False


NAME_CHARS = st.sampled_from([*list("ab_-.[]"), "é", "猫", "\n", "*", "?"])
PATTERN_CHARS = st.sampled_from([*list("ab_-.*?"), "é", "猫"])


@given(
    patterns=st.lists(st.text(PATTERN_CHARS, min_size=1, max_size=6), min_size=1, max_size=4),
    name=st.text(NAME_CHARS, max_size=8),
)
def test_matcher_agrees_with_reference_implementation(patterns: list[str], name: str) -> None:
    expected = any(reference_match(p, name) for p in patterns)
    assert compile_patterns(patterns).matches(name) is expected


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        ("claude-flow__memory_*", "claude-flow__memory_store", True),
        ("claude-flow__memory_*", "claude-flow__swarm_init", False),
        ("read_?ile", "read_file", True),
        ("read_?ile", "read_fle", False),
        ("Read_file", "read_file", False),
        ("read", "read_file", False),
        ("*_file", "read_file", True),
        ("a.b", "axb", False),
        ("*", "", True),
    ],
)
def test_glob_semantics(pattern: str, name: str, matches: bool) -> None:
    assert compile_patterns([pattern]).matches(name) is matches


def test_compile_patterns_is_cached_per_pattern_tuple() -> None:
    assert compile_patterns(["a*", "b"]) is compile_patterns(["a*", "b"])
    assert compile_patterns(["a*", "a*", "b"]).patterns == ("a*", "b")


def test_compile_patterns_accepts_a_single_string() -> None:
    assert compile_patterns("x*").patterns == ("x*",)


def test_empty_pattern_set_matches_nothing() -> None:
    empty = compile_patterns([])
    assert not empty and len(empty) == 0
    assert not empty.matches("anything")


def test_filter_keeps_matching_names_in_order() -> None:
    assert compile_patterns(["b*", "a?"]).filter(["a1", "c", "bz", "a"]) == ["a1", "bz"]


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("", "it is empty"),
        ("memory_[ab]", r"'\[' \(character classes\) is not supported"),
        ("tool_{a,b}", r"'\{' \(brace expansion\) is not supported"),
        ("read file", "non-printable or space character ' '"),
        ("tab\there", "non-printable"),
    ],
)
def test_invalid_pattern_is_rejected_with_reason(pattern: str, message: str) -> None:
    with pytest.raises(InvalidPattern, match=message) as info:
        validate_pattern(pattern, where="agent 'x' allowed_tools")
    assert info.value.pattern == pattern
    assert "agent 'x' allowed_tools" in str(info.value)


def test_non_string_pattern_is_rejected() -> None:
    with pytest.raises(InvalidPattern, match="expected a string, got int"):
        compile_patterns([3])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("pattern", "server"),
    [
        ("claude-flow__memory_*", "claude-flow"),
        ("claude-flow__*", "claude-flow"),
        ("git__status", "git"),
        ("*", None),
        ("*_search", None),
        ("claude-*__memory_*", None),
        ("c?__x", None),
        ("__x", None),
        ("read_file", None),
    ],
)
def test_literal_server_only_for_patterns_naming_a_server(pattern: str, server: str | None) -> None:
    assert literal_server(pattern) == server
    assert compile_patterns([pattern]).servers == ({server} if server else set())


# Tool names never hold a newline (the index joins them with one), so the index is tested on valid characters.
TOOL_NAME_CHARS = st.sampled_from(list("ab_-./9"))


@given(
    names=st.sets(st.text(TOOL_NAME_CHARS, min_size=1, max_size=8), max_size=30),
    pattern=st.text(st.sampled_from(list("ab_-.*?")), min_size=1, max_size=6),
)
def test_name_index_finds_exactly_what_a_scan_finds(names: set[str], pattern: str) -> None:
    glob = compile_patterns([pattern])
    assert sorted(NameIndex(names).matching(glob)) == sorted(n for n in names if reference_match(pattern, n))


@given(
    names=st.sets(st.text(TOOL_NAME_CHARS, min_size=2, max_size=8), min_size=20, max_size=60),
    pattern=st.builds(
        "{}*{}*{}".format,
        st.sampled_from(["", "a", "*"]),
        st.text(st.sampled_from(list("ab_?")), min_size=1, max_size=3),
        st.sampled_from(["", "b", "?"]),
    ),
)
def test_name_index_narrowed_by_an_inside_literal_finds_what_a_scan_finds(names: set[str], pattern: str) -> None:
    glob = compile_patterns([pattern])
    assert sorted(NameIndex(names).matching(glob)) == sorted(n for n in names if reference_match(pattern, n))


@given(
    pattern=st.text(st.sampled_from(list("ab*?")), min_size=1, max_size=7),
    name=st.text(st.sampled_from("ab"), max_size=8),
)
def test_a_single_glob_matches_as_the_reference_does(pattern: str, name: str) -> None:
    # Single globs with at most one '*' and no '?' match by string tests, others by a regex: both must agree.
    assert compile_patterns([pattern]).matches(name) is reference_match(pattern, name)
