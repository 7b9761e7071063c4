"""What a search returns: ranked hits, exact names first, each marked when it only weakly meets the query.

A search ranks every document and returns the best, even when the best meets
little of the query: a request for something no tool does would then come back
as confident junk. Rankers that judge how fully a document meets a query
(``JudgingRanker``: BM25 by the rarity-weighted share of the query's concepts a
tool meets, the embeddings by cosine) mark such hits ``weak``, and
``search_tools`` says so instead of unlocking them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from ..registry import ToolRegistry
from ._bm25 import JudgingRanker
from ._documents import DocumentKind, SearchDocument
from ._snapshot import Snapshot
from ._tokens import identifiers, name_key

__all__ = ["SearchHit", "check_limit", "ranked"]


@dataclass(frozen=True)
class SearchHit:
    """One ranked result: a tool (or skill), or the same tool offered by several servers.

    Attributes:
        document: What matched (the best-scoring member the filters kept).
        score: The backend's score (``inf`` for an exact name match).
        exact: True when the query named the tool exactly.
        members: Every document of the hit, ``document`` first: the same tool
            (same name on its server, same input schema) on each server that offers it.
        weak: True when the backend judges that the tool meets little of the query
            (a request no tool meets finds only weak hits); never for an exact name.
    """

    document: SearchDocument
    score: float
    exact: bool = False
    members: tuple[SearchDocument, ...] = ()
    weak: bool = False

    @property
    def servers(self) -> list[str]:
        """The servers offering the hit's tool, ``document``'s first."""
        return [doc.server for doc in self.members or (self.document,) if doc.server is not None]

    @property
    def names(self) -> list[str]:
        """The canonical name of every tool (or the skill) the hit stands for, ``document``'s first."""
        return [doc.name for doc in self.members or (self.document,)]


def check_limit(limit: int) -> None:
    """Refuse a ``limit`` below 1.

    Raises:
        ValueError: It is.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit!r}")


@dataclass
class _Hits:
    """Turns documents into hits for one query: groups members, applies the filters, hits each group once."""

    snapshot: Snapshot
    server: str | None
    accept: Callable[[SearchDocument], bool] | None
    seen: set[str] = field(default_factory=set)

    def hit(self, doc: SearchDocument, score: float, exact: bool = False, weak: bool = False) -> SearchHit | None:
        self.seen.add(doc.identity)
        documents = self.snapshot.documents
        members = [doc, *(documents[p] for p in self.snapshot.groups[doc.identity] if documents[p] is not doc)]
        kept = [m for m in members if (self.server in (None, m.server)) and (self.accept is None or self.accept(m))]
        return SearchHit(kept[0], score, exact, tuple(kept), weak) if kept else None


def ranked(
    snapshot: Snapshot,
    registry: ToolRegistry,
    query: str,
    server: str | None,
    kind: DocumentKind | None,
    accept: Callable[[SearchDocument], bool] | None,
) -> Iterator[SearchHit]:
    """Every hit for ``query``, best first: the tools (or skill) it names exactly, then the ranking.

    When the whole query is a name, only what it names is returned.
    """
    hits = _Hits(snapshot, server, accept)
    whole = query.strip().strip("`'\"")
    exact_skill = snapshot.skill_names.get(name_key(whole))
    named_alone = bool(_resolve(snapshot, registry, whole, server)) or exact_skill is not None
    if kind in (None, "tool"):
        candidates = dict.fromkeys([whole, *identifiers(query)])
        for name in dict.fromkeys(n for word in candidates for n in _resolve(snapshot, registry, word, server)):
            doc = snapshot.tools[name]
            if doc.identity not in hits.seen and (found := hits.hit(doc, float("inf"), True)) is not None:
                yield found
    skill = snapshot.skill_docs[exact_skill] if exact_skill is not None and kind in (None, "skill") else None
    if skill is not None and (found := hits.hit(skill, float("inf"), True)) is not None:
        yield found
    if not named_alone:
        yield from _scored(hits, query, kind)


def _scored(hits: _Hits, query: str, kind: DocumentKind | None) -> Iterator[SearchHit]:
    """The ranker's hits, best first, each marked weak when the ranker judges it so."""
    snapshot = hits.snapshot
    scores = snapshot.ranker.scores(query)
    positive = np.flatnonzero(scores > 0)
    order = positive[np.argsort(-scores[positive], kind="stable")]
    ranker = snapshot.ranker
    strength, line = None, 0.0
    if isinstance(ranker, JudgingRanker) and len(order):
        strength, line = ranker.strength(query), ranker.weak_below
    for position in order.tolist():
        doc = snapshot.ranked[position]
        if doc.identity in hits.seen or (kind is not None and doc.kind != kind):
            continue
        weak = strength is not None and bool(strength[position] < line)
        if (found := hits.hit(doc, float(scores[position]), weak=weak)) is not None:
            yield found


def _resolve(snapshot: Snapshot, registry: ToolRegistry, word: str, server: str | None) -> list[str]:
    """Indexed tools that ``word`` names: canonically, by provider alias, or by their name on their server.

    Claude Code's spelling of an MCP tool (``mcp__server__tool``) names ``server__tool``.
    """
    if not word:
        return []
    if word in registry:
        names = [registry.resolve(word)]
    else:
        key = name_key(word)
        names = snapshot.names.get(key, [])
        if not names and key.startswith("mcp_"):
            names = snapshot.names.get(key[4:], [])
        if server is not None:
            names = [*names, *snapshot.names.get(name_key(f"{server}__{word}"), [])]
    return [
        n
        for n in dict.fromkeys(names)
        if n in snapshot.tools and (server is None or snapshot.tools[n].server == server)
    ]
