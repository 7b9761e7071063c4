"""Honest answers: a tool's exact name finds it however it is written, and a need no tool meets is called weak."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolsift.registry import TurnScope
from toolsift.search import Discovery, SearchIndex, SearchToolsTool, index_tools
from toolsift.search._bm25 import BM25_WEAK_BELOW, Bm25Backend
from toolsift.search._hybrid import HybridBackend
from toolsift.search._internal import format_ranking


def tool(name: str, description: str, **params: str) -> dict[str, Any]:
    properties = {param: {"type": "string", "description": text} for param, text in params.items()}
    return {"name": name, "description": description, "inputSchema": {"type": "object", "properties": properties}}


CATALOGUE = {
    "files": [
        tool("read_file", "Read the text of a file.", path="The file to read"),
        tool("write_file", "Create a file or overwrite it with new text.", path="Where to write", text="The text"),
        tool("list_directory", "List the entries of a folder.", path="The folder"),
        tool("move_file", "Move or rename a file.", source="The file", destination="Its new path"),
    ],
    "mail": [
        tool("send_email", "Send an email message to a recipient.", to="Recipient address", body="Message text"),
        tool("search_inbox", "Search received email messages by sender or subject.", query="Words to find"),
    ],
    "calendar": [
        tool("create_event", "Add an event to the calendar at a date and time.", title="What", start="When"),
        tool("list_events", "List the calendar's events between two dates.", start="From", end="Until"),
    ],
}
TOOLS = [(server, listed["name"]) for server, tools in CATALOGUE.items() for listed in tools]
INDEX = index_tools(CATALOGUE, descriptions={"mail": "Email over IMAP and SMTP"})
#: A need that one word of (``read``) meets: a weak match, not nothing.
JUNK = "translate this long poem into French, print it in bold type and read it aloud to me slowly"


def words(name: str) -> list[str]:
    return name.split("_")


SPELLINGS = {
    "snake": lambda server, name: name,
    "kebab": lambda server, name: name.replace("_", "-"),
    "spaced": lambda server, name: name.replace("_", " "),
    "upper": lambda server, name: name.upper(),
    "title": lambda server, name: " ".join(word.title() for word in words(name)),
    "camel": lambda server, name: words(name)[0] + "".join(word.title() for word in words(name)[1:]),
    "pascal": lambda server, name: "".join(word.title() for word in words(name)),
    "canonical": lambda server, name: f"{server}__{name}",
    "dotted": lambda server, name: f"{server}.{name}",
    "slashed": lambda server, name: f"{server}/{name}",
    "colon": lambda server, name: f"{server}:{name}",
    "claude code": lambda server, name: f"mcp__{server}__{name}",
    "quoted": lambda server, name: f"`{name}`",
}


@given(st.sampled_from(TOOLS), st.sampled_from(sorted(SPELLINGS)))
def test_an_exact_name_in_any_spelling_returns_that_tool_alone(named: tuple[str, str], spelling: str) -> None:
    server, name = named
    hits = INDEX.search(SPELLINGS[spelling](server, name), limit=5)
    assert [hit.names for hit in hits] == [[f"{server}__{name}"]]
    assert hits[0].exact and not hits[0].weak


@given(st.sampled_from(TOOLS), st.sampled_from(["claude code", "canonical", "camel", "kebab"]))
def test_an_exact_name_inside_a_longer_query_comes_first(named: tuple[str, str], spelling: str) -> None:
    server, name = named
    query = f"please use {SPELLINGS[spelling](server, name).replace(' ', '_')} for this"
    assert INDEX.search(query, limit=5)[0].names == [f"{server}__{name}"]


@pytest.mark.parametrize(
    "need",
    [
        "pause the music playing on my home theater",
        "order a large pizza with extra cheese for delivery",
        "what is the weather forecast in Lisbon tomorrow",
    ],
)
def test_a_need_no_tool_meets_finds_only_weak_hits(need: str) -> None:
    hits = INDEX.search(need, limit=5)
    assert all(hit.weak for hit in hits)
    assert "weak" in format_ranking(INDEX, need) or not hits


@pytest.mark.parametrize(
    ("need", "expected"),
    [
        ("email the quarterly report to Ann", "mail__send_email"),
        ("put a meeting with the team on my calendar next Monday", "calendar__create_event"),
        ("rename notes.txt to ideas.txt", "files__move_file"),
        ("which events do I have this week", "calendar__list_events"),
    ],
)
def test_a_need_a_tool_meets_is_not_weak(need: str, expected: str) -> None:
    first = INDEX.search(need, limit=5)[0]
    assert first.names == [expected] and not first.weak


def test_hybrid_calls_a_hit_weak_only_when_every_member_does() -> None:
    fused = index_tools(CATALOGUE, backend=HybridBackend(Bm25Backend(), Bm25Backend()))
    for need in ("pause the music on my home theater", "email the report to Ann"):
        assert [h.weak for h in fused.search(need)] == [h.weak for h in INDEX.search(need)][: len(fused.search(need))]


def test_a_ranker_that_does_not_judge_never_calls_a_hit_weak() -> None:
    class Plain:
        name = "plain"

        def build(self, documents: Any) -> Any:
            inner = Bm25Backend().build(documents)

            class Scores:
                def scores(self, query: str) -> Any:
                    return inner.scores(query)

            return Scores()

    assert INDEX.search(JUNK) and all(hit.weak for hit in INDEX.search(JUNK))
    for backend in (Plain(), HybridBackend(Plain())):
        hits = index_tools(CATALOGUE, backend=backend).search(JUNK)
        assert hits and not any(hit.weak for hit in hits)


def test_strength_is_the_rarity_weighted_share_of_the_query_met() -> None:
    ranker = INDEX._current().ranker
    strength = ranker.strength("send an email")  # type: ignore[attr-defined]
    documents = INDEX._current().ranked
    best = {doc.name: float(value) for doc, value in zip(documents, strength, strict=True)}
    assert best["mail__send_email"] == pytest.approx(1.0)
    assert best["files__read_file"] < BM25_WEAK_BELOW
    assert ranker.strength("the of and").tolist() == [0.0] * len(documents)  # type: ignore[attr-defined]


async def call(index: SearchIndex, args: dict[str, Any], discovery: Discovery) -> dict[str, Any]:
    if "search_tools" not in index.registry:
        index.registry.register(SearchToolsTool(index), internal=True)
    scope = TurnScope(pinned=frozenset({"search_tools"}))
    result = await index.registry.execute("search_tools", args, scope, discovery=discovery)
    payload: dict[str, Any] = json.loads(result.text_content())
    return payload


async def test_search_tools_says_no_good_match_and_unlocks_nothing_for_a_weak_need() -> None:
    index = index_tools(CATALOGUE)
    discovery = Discovery(index.registry)
    payload = await call(index, {"queries": [JUNK, "send an email"]}, discovery)
    assert payload["weak"] == [JUNK[:79] + "\u2026"] and payload["needs"][0]["tools"] == ["files__read_file"]
    assert payload["unlocked"] == ["mail__send_email"]
    assert "No good match for 'translate this long poem" in payload["note"]
    alone = await call(index, {"query": JUNK}, Discovery(index.registry))
    assert len(alone["weak"]) == 1 and "unlocked" not in alone and "No new tools were unlocked" in alone["note"]
    named = await call(index, {"query": "mcp__mail__search_inbox"}, Discovery(index.registry))
    assert "weak" not in named and named["unlocked"] == ["mail__search_inbox"]
