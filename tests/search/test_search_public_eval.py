"""The evaluation built from BFCL's data (read from the installed ``bfcl-eval`` package)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import _public_bfcl
import _public_eval
from _search_eval import backends

DATA = _public_bfcl.data_folder()
pytestmark = pytest.mark.skipif(DATA is None, reason=f"needs {_public_bfcl.INSTALL}")


@pytest.fixture(scope="module")
def catalogues() -> dict[str, _public_eval.Catalogue]:
    assert DATA is not None
    return {category: _public_bfcl.load(category, DATA) for category in _public_bfcl.CATEGORIES}


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
        names = {f"{server}__{tool['name']}" for server, tools in catalogue.servers.items() for tool in tools}
        assert all(query.needs and frozenset().union(*query.needs) <= names for query in catalogue.queries)
        assert len({query.id for query in catalogue.queries}) == len(catalogue.queries)
        tune = sum(query.split == "tune" for query in catalogue.queries) / len(catalogue.queries)
        assert 0.25 < tune < 0.42 and {query.split for query in catalogue.queries} == set(_public_eval.SPLITS)
    # BFCL's API descriptions became the servers' own; the functions keep theirs.
    steps = catalogues["multi_turn"]
    assert len(steps.servers) == len(steps.about) == 12
    assert all(
        not tool["description"].startswith("This tool belongs to") for tools in steps.servers.values() for tool in tools
    )


def test_a_whole_task_falls_in_one_split(catalogues: dict[str, _public_eval.Catalogue]) -> None:
    tasks = {query.id: query for query in catalogues["multi_turn_task"].queries}
    for step in catalogues["multi_turn"].queries:
        task = tasks[step.id.partition("#")[0]]
        assert step.text in task.text and step.split == task.split == _public_eval.split_of(task.id)


def test_the_default_ranking_beats_plain_bm25_on_the_tuning_steps(
    catalogues: dict[str, _public_eval.Catalogue],
) -> None:
    steps = catalogues["multi_turn"]
    queries = [query for query in steps.queries if query.split == "tune"]
    ours = _public_eval.evaluate(_public_eval.index_ranker(steps, backends(("bm25",))["bm25"]()), queries)
    plain = _public_eval.evaluate(_public_eval.plain_bm25s(steps), queries)
    assert ours.hit5 >= 0.80 and ours.recall10 >= 0.65
    assert ours.hit5 > plain.hit5 and ours.recall10 > plain.recall10 and ours.mrr > plain.mrr
    gap = _public_eval.paired_gap(ours, plain, "hit5")
    assert gap.mean > 0 and gap.low > 0 and gap.queries == len(queries)
