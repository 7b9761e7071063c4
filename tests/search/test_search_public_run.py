"""The runner of the public evaluations (``bench_search.py --public``), on slices written in each dataset's format."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _public_etom
import _report
from _public_run import Request, add_public_options, public_request, run
from test_search_public_sources import write_etom, write_livemcp

BM25 = ("bm25",)


@pytest.fixture
def results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Result files go to a folder of the test's, and no data folder comes from the environment."""
    folder = tmp_path / "results"
    monkeypatch.setattr(_report, "RESULTS", folder)
    monkeypatch.delenv("TOOLSIFT_ETOM", raising=False)
    monkeypatch.delenv("TOOLSIFT_LIVEMCPBENCH", raising=False)
    return folder


@pytest.fixture
def etom(tmp_path: Path) -> Path:
    return write_etom(tmp_path / "ETOM")


def test_each_ranking_is_printed_beside_the_anchor_and_saved_with_its_outcomes(
    results: Path, etom: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    figures = run(Request(sources=("etom",), backends=BM25, folders={"etom": str(etom)}))
    out = capsys.readouterr().out
    assert "etom: 3 tools on 3 servers" in out
    assert "2 annotated tools are not in the catalogue, left out: Nowhere::vanished, Mail Relay: SMTP::fax" in out
    assert "these files differ from the commit the figures are for: data/mcp_registry.json" in out
    assert "etom, heldout, all kinds: 2 queries" in out
    assert "    bm25         hit@1 1.00  hit@5 1.00  hit@10 1.00  recall@10 1.00  MRR 1.00\n" in out
    assert "                 - plain_bm25s: hit@1 +0.50 [+0.00, +1.00]  hit@5 +0.50 [+0.00, +1.00]  " in out
    assert "etom, tune, level1" not in out  # no query of that kind in that split
    saved = json.loads((results / "search_public_etom.json").read_text())
    assert saved["figures"] == figures and saved["details"]["data"] == str(etom)
    kept = json.loads((results / "search_public_etom.outcomes.json").read_text())
    outcomes = kept["per_query"]["etom"]
    assert outcomes.keys() == {"plain_bm25s", "bm25"}
    assert outcomes["bm25"].keys() == {"level1-1", "level2-1", "level3-2", "level4-1"}
    assert outcomes["bm25"]["level1-1"] == [1, 1, 1]  # found by its server's description: "email"
    assert outcomes["plain_bm25s"]["level1-1"] == [None, 0, 1]
    assert figures["public_etom_tools"] == 3 and any(key.endswith("_bm25_minus_plain_bm25s_hit5") for key in figures)


def test_a_later_run_compares_each_ranking_with_itself_in_an_earlier_outcomes_file(
    results: Path, etom: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(Request(sources=("etom",), backends=BM25, folders={"etom": str(etom)}))
    before = shutil.copy(results / "search_public_etom.outcomes.json", tmp_path / "before.json")
    capsys.readouterr()
    figures = run(Request(sources=("etom",), backends=BM25, folders={"etom": str(etom)}, against=Path(before)))
    out = capsys.readouterr().out
    assert "    bm25         hit@1 " in out and "- --against: hit@1 +0.00 [+0.00, +0.00]" in out
    assert figures["public_etom_heldout_bm25_minus_against_mrr"] == [0.0, 0.0, 0.0]


def test_a_file_that_holds_no_outcomes_is_refused_by_name(results: Path, tmp_path: Path) -> None:
    wrong = tmp_path / "search_public_etom.json"
    wrong.write_text(json.dumps({"figures": {}}))
    with pytest.raises(SystemExit, match=f"--against {wrong}: not an outcomes file of --public"):
        run(Request(sources=("etom",), backends=BM25, against=wrong))


def test_absent_data_is_skipped_saying_where_to_get_it_and_nothing_is_saved(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(Request(sources=("etom", "livemcpbench"), backends=BM25)) == {}
    out = capsys.readouterr().out
    assert (
        "etom: not measured (no checkout of snooow1029/ETOM given: git clone https://github.com/snooow1029/ETOM" in out
    )
    assert f"git -C ETOM checkout {_public_etom.COMMIT}, then --etom ETOM (or TOOLSIFT_ETOM=ETOM)" in out
    assert "livemcpbench: not measured (no checkout of icip-cas/LiveMCPBench given" in out
    assert not results.exists()


def test_a_checkout_missing_a_file_is_named_and_the_other_source_still_runs(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOOLSIFT_LIVEMCPBENCH", str(write_livemcp(tmp_path / "LiveMCPBench")))
    (tmp_path / "empty").mkdir()
    figures = run(Request(sources=("etom", "livemcpbench"), backends=BM25, folders={"etom": str(tmp_path / "empty")}))
    out = capsys.readouterr().out
    assert f"etom: not measured ({tmp_path / 'empty' / 'data' / 'mcp_registry.json'} not found)" in out
    assert "livemcpbench, heldout: 2 queries" in out and "public_livemcpbench_heldout_bm25_hit5" in figures
    assert sorted(path.name for path in results.iterdir()) == [
        "search_public_livemcpbench.json",
        "search_public_livemcpbench.outcomes.json",
    ]


def test_the_held_out_source_has_no_tune_split(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(Request(sources=("livemcpbench",), splits=("tune",), backends=BM25)) == {}
    assert "livemcpbench: has no tune split (its splits: heldout)" in capsys.readouterr().out


def test_any_ranking_of_the_run_can_be_the_one_compared_with(
    results: Path, etom: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(Request(sources=("etom",), backends=BM25, folders={"etom": str(etom)}, versus="bm25"))
    out = capsys.readouterr().out
    assert "- bm25: hit@1 " in out and "- plain_bm25s" not in out
    with pytest.raises(SystemExit, match="--versus hybrid: not a ranking of this run"):
        run(Request(sources=("etom",), backends=BM25, folders={"etom": str(etom)}, versus="hybrid"))


def test_the_command_line_names_sources_and_splits_in_any_order() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--public", nargs="*")
    add_public_options(parser)
    request = public_request(parser.parse_args(["--public", "tune", "etom", "--backend", "bm25", "--etom", "E"]))
    assert (request.sources, request.splits, request.backends) == (["etom"], ["tune"], ("bm25",))
    assert request.folders == {"etom": "E", "livemcpbench": None}
    everything = public_request(parser.parse_args(["--public"]))
    assert (everything.sources, everything.splits) == (("bfcl", "etom", "livemcpbench"), ("tune", "heldout"))
    assert everything.backends == ("bm25", "semantic", "hybrid")
    with pytest.raises(SystemExit, match="--public: nonsense is neither a source"):
        public_request(parser.parse_args(["--public", "nonsense"]))
