"""The evaluation built from public data (BFCL, read from the installed ``bfcl-eval`` package)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from toolsift.search import index_tools

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import _public_eval

DATA = _public_eval.data_folder()
pytestmark = pytest.mark.skipif(DATA is None, reason=f"needs {_public_eval.INSTALL}")


@pytest.fixture(scope="module")
def catalogues() -> dict[str, _public_eval.Catalogue]:
    assert DATA is not None
    return {category: _public_eval.load(category, DATA) for category in _public_eval.CATEGORIES}


def test_every_catalogue_pools_its_functions_and_every_answer_is_in_it(
    catalogues: dict[str, _public_eval.Catalogue],
) -> None:
    sizes = {name: (catalogue.size, len(catalogue.queries)) for name, catalogue in catalogues.items()}
    assert sizes == {
        "multiple": (443, 200),
        "parallel_multiple": (458, 200),
        "live_multiple": (457, 1053),
        "multi_turn": (162, 731),
        "multi_turn_task": (162, 200),
        "pooled": (1183, 2184),
    }
    for catalogue in catalogues.values():
        names = {tool["name"] for tools in catalogue.servers.values() for tool in tools}
        assert all(query.expected and query.expected <= names for query in catalogue.queries)
        tune = sum(query.split == "tune" for query in catalogue.queries) / len(catalogue.queries)
        assert 0.25 < tune < 0.42 and {query.split for query in catalogue.queries} == set(_public_eval.SPLITS)
    # BFCL's API descriptions became the servers' own; the functions keep theirs.
    steps = catalogues["multi_turn"]
    assert len(steps.servers) == len(steps.about) == 12
    assert all(
        not tool["description"].startswith("This tool belongs to") for tools in steps.servers.values() for tool in tools
    )


def test_a_whole_task_falls_in_one_split(catalogues: dict[str, _public_eval.Catalogue]) -> None:
    assert _public_eval.split_of("multi_turn_base_0") == _public_eval.split_of("multi_turn_base_0")
    by_text = {query.text: query.split for query in catalogues["multi_turn_task"].queries}
    for step in catalogues["multi_turn"].queries:
        assert any(step.text in text and split == step.split for text, split in by_text.items())


def test_the_default_ranking_beats_plain_bm25_on_the_tuning_steps(
    catalogues: dict[str, _public_eval.Catalogue],
) -> None:
    steps = catalogues["multi_turn"]
    queries = [query for query in steps.queries if query.split == "tune"]
    index = index_tools(steps.servers, descriptions=steps.about)
    ours = _public_eval.evaluate(
        lambda q: [frozenset(doc.local_name for doc in hit.members) for hit in index.search(q, limit=10)], queries
    )
    plain = _public_eval.evaluate(_public_eval.plain_bm25s(steps), queries)
    assert ours.hit5 >= 0.80 and ours.recall10 >= 0.65
    assert ours.hit5 > plain.hit5 and ours.recall10 > plain.recall10 and ours.mrr > plain.mrr
    gap, low, _ = _public_eval.hit5_gap(ours, plain)
    assert gap > 0 and low > 0
