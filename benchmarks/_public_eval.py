"""What every search evaluation built from public data shares: catalogues, queries, splits, metrics, comparisons.

A source (``_public_bfcl``, ``_public_etom``, ``_public_livemcp``) turns data
nobody here wrote into :class:`Catalogue`\\ s: servers with their tools as MCP
``Tool`` JSON, what each server says of itself, and queries. A query's
``needs`` are the tools it needs, each as the set of canonical tool names
(``server__tool``) any of which meets it: one name, or the same tool on every
server offering it, or the tools a source declares equivalent.

Metrics, over the top 10 of a ranking: hit@k (a tool meeting some need among the
first k), recall@10 (the share of the query's needs met in the top 10) and MRR
(1 / rank of the first hit meeting a need). Each is kept per query
(:class:`Outcome`), so two rankings of the same queries are compared pairwise
(:func:`paired_gap`), in one run or against a run saved earlier.

Splits: a query falls in ``tune`` when the SHA-256 of its source's id for it (a
whole task's, where a task gives several queries), read as a number, is divisible
by 3, else in ``heldout``; a source kept entirely for checking has only ``heldout``.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _search_eval import DEPTH, Ranking, bm25s_ranker

from toolsift.search import index_tools
from toolsift.search._bm25 import SearchBackend

SPLITS = ("tune", "heldout")
METRICS = ("hit1", "hit5", "hit10", "recall10", "mrr")
SHOWN = {"hit1": "hit@1", "hit5": "hit@5", "hit10": "hit@10", "recall10": "recall@10", "mrr": "MRR"}
#: The metrics each comparison prints an interval for.
COMPARED = ("hit1", "hit5", "recall10", "mrr")
Need = frozenset[str]


@dataclass(frozen=True)
class Query:
    """One query: its source's id for it, its text, the tools it needs, its split and kind (a source's category)."""

    id: str
    text: str
    needs: tuple[Need, ...]
    split: str
    kind: str = ""


@dataclass(frozen=True)
class Catalogue:
    """Server -> its tools (MCP ``Tool`` JSON), server -> what it says of itself, and the queries.

    ``absent`` names annotated tools the catalogue lacks: left out of the needs
    (a query left with none is dropped), since no ranking could find them.
    """

    name: str
    servers: dict[str, list[dict[str, Any]]]
    about: dict[str, str]
    queries: list[Query]
    absent: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        return sum(len(tools) for tools in self.servers.values())


@dataclass(frozen=True)
class Outcome:
    """How one ranking did on one query: the rank of its first hit meeting a need (None: not in the top 10),
    and how many of the query's needs its top 10 met."""

    rank: int | None
    met: int
    needs: int

    def value(self, metric: str) -> float:
        if metric == "recall10":
            return self.met / self.needs
        if metric == "mrr":
            return 0.0 if self.rank is None else 1 / self.rank
        depth = int(metric.removeprefix("hit"))
        return float(self.rank is not None and self.rank <= depth)


@dataclass(frozen=True)
class Metrics:
    """One ranking's outcome on each query (by id), and their means."""

    outcomes: Mapping[str, Outcome] = field(default_factory=dict)

    @property
    def queries(self) -> int:
        return len(self.outcomes)

    def mean(self, metric: str) -> float:
        return sum(o.value(metric) for o in self.outcomes.values()) / max(1, len(self.outcomes))

    hit1 = property(lambda self: self.mean("hit1"))
    hit5 = property(lambda self: self.mean("hit5"))
    hit10 = property(lambda self: self.mean("hit10"))
    recall10 = property(lambda self: self.mean("recall10"))
    mrr = property(lambda self: self.mean("mrr"))

    def row(self) -> str:
        return "  ".join(f"{SHOWN[m]} {self.mean(m):.2f}" for m in METRICS)

    def figures(self) -> dict[str, float]:
        return {"queries": self.queries, **{m: self.mean(m) for m in METRICS}}

    def only(self, ids: Iterable[str]) -> Metrics:
        """The same ranking on the queries of ``ids`` it has an outcome for."""
        return Metrics({i: self.outcomes[i] for i in ids if i in self.outcomes})

    def to_json(self) -> dict[str, list[Any]]:
        return {i: [o.rank, o.met, o.needs] for i, o in self.outcomes.items()}

    @classmethod
    def from_json(cls, data: Mapping[str, Sequence[Any]]) -> Metrics:
        return cls({i: Outcome(rank, met, needs) for i, (rank, met, needs) in data.items()})


@dataclass(frozen=True)
class Gap:
    """A metric of one ranking minus another's on the same queries, with a 95 % paired bootstrap interval."""

    metric: str
    mean: float
    low: float
    high: float
    queries: int

    def __str__(self) -> str:
        return f"{SHOWN[self.metric]} {self.mean:+.2f} [{self.low:+.2f}, {self.high:+.2f}]"


def paired_gap(ours: Metrics, anchor: Metrics, metric: str = "hit5", *, rounds: int = 2000, seed: int = 7) -> Gap:
    """``metric`` of ``ours`` minus ``anchor`` over the queries both ranked, resampled by query.

    Raises:
        ValueError: The two share no query.
    """
    common = sorted(ours.outcomes.keys() & anchor.outcomes.keys())
    if not common:
        raise ValueError("the two rankings share no query: nothing to compare")
    differences = [ours.outcomes[i].value(metric) - anchor.outcomes[i].value(metric) for i in common]
    draw = random.Random(seed)
    count = len(differences)
    means = sorted(sum(draw.choices(differences, k=count)) / count for _ in range(rounds))
    return Gap(metric, sum(differences) / count, means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1], count)


def paired_gaps(ours: Metrics, anchor: Metrics) -> list[Gap]:
    """:func:`paired_gap` for each metric worth an interval (hit@1, hit@5, recall@10, MRR)."""
    return [paired_gap(ours, anchor, metric) for metric in COMPARED]


def split_of(identifier: str) -> str:
    return "tune" if int(hashlib.sha256(identifier.encode()).hexdigest(), 16) % 3 == 0 else "heldout"


def evaluate(rank: Callable[[str], Ranking], queries: Sequence[Query]) -> Metrics:
    """Score ``rank`` (query -> ranking, each hit the canonical names it stands for) on ``queries``."""
    outcomes = {}
    for query in queries:
        ranking = rank(query.text)[:DEPTH]
        first = next((i for i, hit in enumerate(ranking, start=1) if any(hit & need for need in query.needs)), None)
        met = sum(any(hit & need for hit in ranking) for need in query.needs)
        outcomes[query.id] = Outcome(first, met, len(query.needs))
    return Metrics(outcomes)


def index_ranker(catalogue: Catalogue, backend: SearchBackend) -> Callable[[str], Ranking]:
    """toolsift's ranking of ``catalogue`` (indexed as ``search_tools`` indexes servers) with ``backend``."""
    index = index_tools(catalogue.servers, descriptions=catalogue.about, backend=backend)
    index.refresh()
    return lambda query: [frozenset(hit.names) for hit in index.search(query, limit=DEPTH)]


def plain_bm25s(catalogue: Catalogue) -> Callable[[str], Ranking]:
    """The anchor: plain bm25s over each tool's ``name + description`` (see ``_search_eval.bm25s_ranker``)."""
    listed = [(server, tool) for server, tools in catalogue.servers.items() for tool in tools]
    return bm25s_ranker(
        [f"{server}__{tool['name']}" for server, tool in listed],
        [f"{tool['name']} {tool.get('description') or ''}" for _, tool in listed],
    )


# -- building catalogues ---------------------------------------------------------------------------------


def server_keys(titles: Iterable[str]) -> dict[str, str]:
    """A config key for each server title ("Peekaboo MCP: Screenshots" -> ``peekaboo-mcp-screenshots``), unique."""
    keys: dict[str, str] = {}
    taken: set[str] = set()
    for title in titles:
        base = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "server"
        key, number = base, 1
        while key in taken:
            number += 1
            key = f"{base}-{number}"
        keys[title] = key
        taken.add(key)
    return keys


def by_local_name(servers: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Need]:
    """Each tool name -> the canonical names of that tool on every server listing it."""
    found: dict[str, set[str]] = {}
    for server, tools in servers.items():
        for tool in tools:
            found.setdefault(tool["name"], set()).add(f"{server}__{tool['name']}")
    return {name: frozenset(names) for name, names in found.items()}


def needs_named(names: Iterable[str], known: Mapping[str, Need]) -> tuple[tuple[Need, ...], tuple[str, ...]]:
    """The needs for tools named without their server (any server's tool of that name meets it), and the unknown."""
    needs: list[Need] = []
    unknown: list[str] = []
    for name in dict.fromkeys(names):
        if name in known:
            needs.append(known[name])
        else:
            unknown.append(name)
    return tuple(needs), tuple(unknown)


# -- sources ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """Where an evaluation's data comes from, how to get it, and how to read it.

    Attributes:
        name: What ``--public NAME`` calls it.
        splits: The splits it has (only ``heldout`` for a source never used to choose anything).
        load: Data folder -> its catalogues. Raises ``OSError`` or ``ValueError`` naming the file.
        find: Option value (or None) -> the data folder, or None when nothing says where it is.
        missing: What to do to get the data, printed when it is absent.
        digests: File (relative to the folder) -> SHA-256 at the named commit, to warn when the data differs.
    """

    name: str
    splits: tuple[str, ...]
    load: Callable[[Path], list[Catalogue]]
    find: Callable[[str | None], Path | None]
    missing: str
    digests: Mapping[str, str] = field(default_factory=dict)


def folder_from(variable: str) -> Callable[[str | None], Path | None]:
    """A ``Source.find`` reading the option's value, else the environment variable ``variable``."""

    def find(given: str | None) -> Path | None:
        value = given or os.environ.get(variable)
        return Path(value).expanduser() if value else None

    return find


def changed_files(folder: Path, digests: Mapping[str, str]) -> list[str]:
    """The files of ``digests`` whose content in ``folder`` differs from the commit the figures name."""
    return [
        name
        for name, digest in digests.items()
        if not (folder / name).is_file() or hashlib.sha256((folder / name).read_bytes()).hexdigest() != digest
    ]


def data_file(folder: Path, name: str) -> Path:
    """``folder / name``, or an error naming the missing file.

    Raises:
        FileNotFoundError: Not there.
    """
    path = folder / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found")
    return path


def read_json(path: Path) -> Any:
    """The JSON in ``path``.

    Raises:
        ValueError: Not JSON (the path named).
    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from exc
