"""Running the search evaluations built from public data: every backend beside plain bm25s, compared pairwise.

``python benchmarks/bench_search.py --public [NAME ...] [SPLIT ...]`` runs this
part alone. For each source's catalogue it indexes the tools once per backend
(as ``search_tools`` indexes servers: each tool on its server, with what the
server says of itself), ranks the queries of the splits asked for, and prints,
per split and kind of query, hit@1/5/10, recall@10 and MRR of each ranking, with
the paired bootstrap interval of its difference to the anchor (plain ``bm25s``,
or the ranking ``--versus`` names) and, given ``--against FILE`` (the outcomes
file of an earlier run), to the same ranking there: a ranking change is measured
by running main, copying its outcomes file aside, and running the change
``--against`` the copy.

Each source's figures go to ``benchmarks/results/search_public_<source>.json``,
and each ranking's outcome per query to ``search_public_<source>.outcomes.json``
beside it (not kept in git): the file ``--against`` reads.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import _public_bfcl
import _public_etom
import _public_livemcp
from _public_eval import (
    SPLITS,
    Catalogue,
    Gap,
    Metrics,
    Source,
    changed_files,
    evaluate,
    index_ranker,
    paired_gaps,
    plain_bm25s,
    read_json,
)
from _report import save
from _search_eval import BACKENDS, Ranking, backends

from toolsift.search._bm25 import SearchBackend

SOURCES: dict[str, Source] = {s.name: s for s in (_public_bfcl.SOURCE, _public_etom.SOURCE, _public_livemcp.SOURCE)}
ANCHOR = "plain_bm25s"
#: Per catalogue, per ranking: its outcome on each query (as an outcomes file keeps them).
Outcomes = dict[str, dict[str, Metrics]]
#: Backend name -> a new backend of that kind.
Made = Mapping[str, Callable[[], SearchBackend]]


@dataclass(frozen=True)
class Request:
    """What to run: sources, splits, backends, where each source's data is, and what to compare with.

    Attributes:
        folders: Source name -> the ``--etom``/``--livemcpbench`` value (None: its environment variable).
        versus: The ranking every other is compared with in the same run.
        against: The outcomes file of an earlier run; each ranking is also compared with the same one there.
    """

    sources: Sequence[str] = tuple(SOURCES)
    splits: Sequence[str] = SPLITS
    backends: Sequence[str] = BACKENDS
    folders: Mapping[str, str | None] = field(default_factory=dict)
    versus: str = ANCHOR
    against: Path | None = None


def run(request: Request) -> dict[str, Any]:
    """Every source of ``request`` that is at hand, printed and saved; returns the figures of them all."""
    earlier = _earlier(request.against)
    made = backends(request.backends)
    figures: dict[str, Any] = {}
    for name in request.sources:
        figures |= run_source(SOURCES[name], request, made, earlier.get(name, {}))
    return figures


def _earlier(path: Path | None) -> dict[str, Outcomes]:
    """Source -> catalogue -> ranking -> outcomes, read from the outcomes file of an earlier run."""
    if path is None:
        return {}
    try:
        record = read_json(path)
        outcomes, source = record["per_query"], record["source"]
        return {source: {c: {r: Metrics.from_json(o) for r, o in ranks.items()} for c, ranks in outcomes.items()}}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"--against {path}: not an outcomes file of --public ({exc})") from exc


def run_source(source: Source, request: Request, made: Made, earlier: Outcomes) -> dict[str, Any]:
    """One source: each of its catalogues on the splits it has of those asked for; saved with the outcomes."""
    splits = [split for split in request.splits if split in source.splits]
    folder = source.find(request.folders.get(source.name))
    if not splits:
        print(f"  {source.name}: has no {' or '.join(request.splits)} split (its splits: {', '.join(source.splits)})")
        return {}
    if folder is None:
        print(f"  {source.name}: not measured ({source.missing})")
        return {}
    changed = changed_files(folder, source.digests)
    if changed:
        print(f"  {source.name}: these files differ from the commit the figures are for: {', '.join(changed)}")
    try:
        catalogues = source.load(folder)
    except (OSError, ValueError) as exc:
        print(f"  {source.name}: not measured ({exc})")
        return {}
    started, load = datetime.now(UTC), os.getloadavg()[0]
    print(f"  {source.name}: {started:%Y-%m-%d %H:%M} UTC, load average {load:.1f}")
    figures: dict[str, Any] = {}
    outcomes: Outcomes = {}
    for catalogue in catalogues:
        before = earlier.get(catalogue.name, {})
        found, outcomes[catalogue.name] = run_catalogue(catalogue, splits, made, request.versus, before)
        figures |= found
    details = {"data": str(folder), "differs_from_named_commit": changed, "load_average": [load, os.getloadavg()[0]]}
    saved = save(f"search_public_{source.name}", figures, details=details, show=False)
    per_query = {c: {r: m.to_json() for r, m in ranks.items()} for c, ranks in outcomes.items()}
    kept = saved.with_suffix(".outcomes.json")
    kept.write_text(json.dumps({"source": source.name, "per_query": per_query}, separators=(",", ":")) + "\n")
    print(f"outcomes per query in {kept} (for --against)")
    return figures


def rankers(catalogue: Catalogue, made: Made) -> dict[str, Callable[[str], Ranking]]:
    """The anchor and each backend's ranking of ``catalogue``."""
    found: dict[str, Callable[[str], Ranking]] = {ANCHOR: plain_bm25s(catalogue)}
    for name, make in made.items():
        found[name] = index_ranker(catalogue, make())
    return found


def run_catalogue(
    catalogue: Catalogue, splits: Sequence[str], made: Made, versus: str, before: Mapping[str, Metrics]
) -> tuple[dict[str, Any], dict[str, Metrics]]:
    """Each ranking of ``catalogue`` on the queries of ``splits``: figures per split and kind, and the outcomes.

    Each ranking is compared with ``versus`` and with the same ranking in ``before`` (an earlier run's), if there.
    """
    servers = f" on {len(catalogue.servers)} servers" if len(catalogue.servers) > 1 else ""
    print(f"  {catalogue.name}: {catalogue.size:,} tools{servers}")
    if catalogue.absent:
        shown = ", ".join(catalogue.absent[:8]) + (", ..." if len(catalogue.absent) > 8 else "")
        print(f"    {len(catalogue.absent)} annotated tools are not in the catalogue, left out: {shown}")
    queries = [query for query in catalogue.queries if query.split in splits]
    outcomes: dict[str, Metrics] = {}
    for name, rank in rankers(catalogue, made).items():
        started = time.perf_counter()
        outcomes[name] = evaluate(rank, queries)
        print(f"    {name}: {len(queries):,} queries ranked in {time.perf_counter() - started:.1f} s")
    if versus not in outcomes:
        raise SystemExit(f"--versus {versus}: not a ranking of this run (rankings: {', '.join(outcomes)})")
    figures: dict[str, Any] = {f"public_{catalogue.name}_tools": catalogue.size}
    kinds = sorted({query.kind for query in queries})
    for split in splits:
        for kind in [*kinds, ""] if len(kinds) > 1 else [""]:
            ids = [q.id for q in queries if q.split == split and (not kind or q.kind == kind)]
            if not ids:
                continue
            shown = kind or ("all kinds" if len(kinds) > 1 else "")
            print(f"  {catalogue.name}, {split}{', ' + shown if shown else ''}: {len(ids):,} queries")
            part = {name: metrics.only(ids) for name, metrics in outcomes.items()}
            for name, metrics in part.items():
                print(f"    {name:12} {metrics.row()}")
                key = "_".join(p for p in ("public", catalogue.name, split, kind, name) if p)
                figures |= {f"{key}_{metric}": value for metric, value in metrics.figures().items()}
                if name != versus:
                    figures |= _figures(f"{key}_minus_{versus}", _compare(f"- {versus}", metrics, part[versus]))
                if name in before:
                    figures |= _figures(f"{key}_minus_against", _compare("- --against", metrics, before[name]))
    return figures, outcomes


def _compare(label: str, ours: Metrics, theirs: Metrics) -> list[Gap]:
    """Print ``ours`` minus ``theirs`` on their common queries, each metric with its interval; return the gaps."""
    common = ours.outcomes.keys() & theirs.outcomes.keys()
    if not common:
        print(f"{' ' * 17}{label}: no query in common")
        return []
    gaps = paired_gaps(ours, theirs)
    print(f"{' ' * 17}{label}: {'  '.join(str(gap) for gap in gaps)}  ({len(common):,} queries)")
    return gaps


def _figures(key: str, gaps: Sequence[Gap]) -> dict[str, list[float]]:
    return {f"{key}_{gap.metric}": [gap.mean, gap.low, gap.high] for gap in gaps}


def add_public_options(parser: argparse.ArgumentParser) -> None:
    """The options of part 0 (``--public``'s own names and splits are parsed by :func:`public_request`)."""
    parser.add_argument(
        "--backend",
        action="append",
        choices=BACKENDS,
        help="rank with this backend (repeat for several; default: every one installed); parts 0 and 1",
    )
    parser.add_argument("--etom", metavar="PATH", help="a checkout of snooow1029/ETOM (default: $TOOLSIFT_ETOM)")
    parser.add_argument(
        "--livemcpbench", metavar="PATH", help="a checkout of icip-cas/LiveMCPBench (default: $TOOLSIFT_LIVEMCPBENCH)"
    )
    parser.add_argument(
        "--versus", default=ANCHOR, metavar="RANKING", help=f"compare with this ranking (default {ANCHOR})"
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="FILE",
        help="compare each ranking with itself in an earlier run's outcomes file",
    )


def public_request(arguments: argparse.Namespace) -> Request:
    """The :class:`Request` of the command line: ``--public``'s words are source names or splits."""
    words = list(arguments.public or ())
    unknown = [word for word in words if word not in SOURCES and word not in SPLITS]
    if unknown:
        raise SystemExit(f"--public: {', '.join(unknown)} is neither a source ({', '.join(SOURCES)}) nor a split")
    return Request(
        sources=[word for word in words if word in SOURCES] or tuple(SOURCES),
        splits=[word for word in words if word in SPLITS] or SPLITS,
        backends=tuple(arguments.backend or BACKENDS),
        folders={"etom": arguments.etom, "livemcpbench": arguments.livemcpbench},
        versus=arguments.versus,
        against=arguments.against,
    )
