"""How well a search tells a need no tool meets from one a tool meets (``SearchHit.weak``).

Positives: the queries whose first hit is right (BFCL's pooled catalogue, the
project's own query sets, and ETOM's levels 1-4 when a checkout is given); a
good line keeps them (their first hit is not weak). Negatives: ETOM's level 5,
91 requests its authors wrote for no tool of the catalogue; and the queries of
one catalogue run against another (BFCL's questions against the recorded
claude-flow, general, everything, time and git tools, and the project's own
queries against BFCL's pooled catalogue). A good line flags their first hit as
weak, or finds nothing. A few cross-catalogue queries do have a tool on the
other side ("list the files" finds a file tool in both), so the flagged share
of those is a floor on what the line catches, not a rate of errors.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import _public_bfcl
import _public_etom
import _search_eval
from _public_eval import Query, data_file

from toolsift.search import SearchIndex, index_tools
from toolsift.search._bm25 import SearchBackend

LEVEL5 = "data/queries/level_5.json"


@dataclass(frozen=True)
class WeakFigures:
    kept: dict[str, tuple[int, int]]  # per positive set: right first hits not called weak, of right first hits
    flagged: dict[str, tuple[int, int]]  # per negative set: first hit weak or none, of queries

    def row(self) -> str:
        kept = sum(k for k, _ in self.kept.values()) / max(1, sum(n for _, n in self.kept.values()))
        parts = ", ".join(f"{name} {k / n:.3f} of {n}" for name, (k, n) in self.kept.items())
        sets = ", ".join(f"{name} {k / n:.2f} of {n}" for name, (k, n) in self.flagged.items())
        return f"right first hits kept {kept:.3f} ({parts}); negatives flagged: {sets}"


def _first(index: SearchIndex, text: str) -> tuple[set[str], bool]:
    """The first hit's names (canonical and on their server) and whether it is weak; no hit counts as weak."""
    hits = index.search(text, limit=1)
    if not hits:
        return set(), True
    return {name for doc in hits[0].members for name in (doc.name, doc.local_name)}, hits[0].weak


def _kept(index: SearchIndex, asked: Iterable[tuple[str, set[str]]]) -> tuple[int, int]:
    judged = []
    for text, wanted in asked:
        names, weak = _first(index, text)
        if names & wanted:
            judged.append(not weak)
    return sum(judged), len(judged)


def _flagged(index: SearchIndex, texts: Iterable[str]) -> tuple[int, int]:
    flags = [_first(index, text)[1] for text in texts]
    return sum(flags), len(flags)


def _wanted(query: Query) -> set[str]:
    return set().union(*query.needs)


def measure(make: Callable[[], SearchBackend], split: str, own_splits: Iterable[str], etom: Path | None) -> WeakFigures:
    """Positives of ``split`` (and ``own_splits`` of the project's queries) and the negatives, for one backend."""
    data = _public_bfcl.data_folder()
    assert data is not None
    pooled = _public_bfcl.load("pooled", data)
    public = index_tools(pooled.servers, descriptions=pooled.about, backend=make())
    own = SearchIndex(_search_eval.eval_registry(), backend=make())
    bfcl = [q for q in pooled.queries if q.split == split]
    mine = [q for name in own_splits for q in _search_eval.load_queries(name)]
    kept = {
        "BFCL": _kept(public, ((q.text, _wanted(q)) for q in bfcl)),
        "own": _kept(own, ((q.text, set(q.expected)) for q in mine)),
    }
    flagged = {
        "BFCL questions vs the project's servers": _flagged(own, (q.text for q in bfcl)),
        "the project's queries vs BFCL": _flagged(public, (q.text for q in mine)),
    }
    if etom is not None:
        (catalogue,) = _public_etom.load(etom)
        index = index_tools(catalogue.servers, descriptions=catalogue.about, backend=make())
        kept["ETOM"] = _kept(index, ((q.text, _wanted(q)) for q in catalogue.queries if q.split == split))
        unmet = json.loads(data_file(etom, LEVEL5).read_text(encoding="utf-8"))
        flagged["ETOM level 5 (no tool meets)"] = _flagged(index, (str(raw["query"]) for raw in unmet))
    return WeakFigures(kept, flagged)
