"""A tool's BM25 score is raised by how much of the query its whole server meets."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from local_tools import RecordingTool

from toolsift.search._bm25 import Bm25Backend
from toolsift.search._documents import tool_document
from toolsift.search._fielded import FieldedIndex
from toolsift.search._query import expand
from toolsift.search._server_prior import SERVER_PRIOR, ServerGroups


def test_of_two_equal_tools_the_one_whose_server_meets_the_rest_of_the_query_scores_higher() -> None:
    tools = [
        RecordingTool("code__create_issue", description="Create an issue."),
        RecordingTool("code__list_branches", description="List the branches of a repository."),
        RecordingTool("mail__create_issue", description="Create an issue."),
        RecordingTool("mail__send", description="Send a message."),
    ]
    documents = [tool_document(tool.spec) for tool in tools]
    scores = Bm25Backend().build(documents).scores("create an issue in the repository")
    assert scores[0] > scores[2] > 0


def test_a_one_word_query_is_scored_by_bm25_alone() -> None:
    tools = [
        RecordingTool("code__create_issue", description="Create an issue in a repository."),
        RecordingTool("code__list_branches", description="List the branches of a repository."),
        RecordingTool("mail__issue_refund", description="Issue a refund."),
    ]
    documents = [tool_document(tool.spec) for tool in tools]
    scorer = FieldedIndex().build(documents)
    raw = scorer.scores(expand("issue", scorer.vocabulary, scorer.stems).weights)
    assert raw[0] > 0 and raw[2] > 0
    assert np.allclose(Bm25Backend().build(documents).scores("issue"), raw)


def test_documents_of_no_server_are_each_a_group_of_their_own() -> None:
    groups = ServerGroups([None, None, "s", "s"])
    met = [np.array([1, 0, 1, 0], np.float32), np.array([0, 1, 0, 1], np.float32)]
    boost = groups.boost(met, np.ones(2, np.float32))
    assert np.allclose(boost, [1 + SERVER_PRIOR / 2, 1 + SERVER_PRIOR / 2, 1 + SERVER_PRIOR, 1 + SERVER_PRIOR])


def test_no_documents_or_no_concept_met_boosts_nothing() -> None:
    assert ServerGroups([]).boost([], np.ones(0, np.float32)).shape == (0,)
    none_met = ServerGroups(["a", "b"]).boost([np.zeros(2, np.float32)], np.ones(1, np.float32))
    assert np.array_equal(none_met, [1, 1])


@given(
    servers=st.lists(st.sampled_from(["a", "b", "c", None]), min_size=1, max_size=12),
    data=st.data(),
)
def test_boosts_lie_between_one_and_the_prior_and_follow_each_servers_reach(
    servers: list[str | None], data: st.DataObject
) -> None:
    concepts = data.draw(st.integers(min_value=1, max_value=4))
    shares = st.sampled_from([0.0, 0.5, 1.0])
    met = [np.array(data.draw(st.lists(shares, min_size=len(servers), max_size=len(servers))), np.float32)]
    met += [
        np.array(data.draw(st.lists(shares, min_size=len(servers), max_size=len(servers))), np.float32)
        for _ in range(concepts - 1)
    ]
    weights = np.array(data.draw(st.lists(st.floats(0.1, 5), min_size=concepts, max_size=concepts)), np.float32)
    boost = ServerGroups(servers).boost(met, weights)
    assert np.all(boost >= 1 - 1e-6) and np.all(boost <= 1 + SERVER_PRIOR + 1e-5)
    reach = {}
    for i, server in enumerate(servers):
        key = server if server is not None else i
        reach[key] = np.maximum(reach.get(key, 0), np.array([m[i] for m in met]))
    share = {key: float(weights @ value) for key, value in reach.items()}
    best = max(share.values())
    for i, server in enumerate(servers):
        key = server if server is not None else i
        expected = 1 + SERVER_PRIOR * share[key] / best if best > 0 else 1
        assert np.isclose(boost[i], expected, rtol=1e-5)
