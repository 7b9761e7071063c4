"""The ranking as a person reads it: what ``toolsift tools --search "query"`` prints."""

from __future__ import annotations

from ._index import SearchIndex

__all__ = ["format_ranking"]


def format_ranking(index: SearchIndex, query: str, *, limit: int = 10, server: str | None = None) -> str:
    """One line per hit, best first: rank, score, kind, name, server and one-line description.

    Every indexed tool is ranked, internal ones included: this shows what the
    index holds, not what a given agent may call (``search_tools`` applies the
    permission layers).

    Raises:
        ValueError: ``limit`` is below 1.
    """
    hits = index.search(query, limit=limit, server=server)
    if not hits:
        return f"No tool or skill matches {query!r} ({len(index.documents)} indexed, backend {index.backend})."
    rows = []
    for rank, hit in enumerate(hits, start=1):
        doc = hit.document
        score = "exact" if hit.exact else f"{hit.score:.2f}"
        rows.append((str(rank), score, doc.kind, doc.name, doc.server or "-", doc.summary))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = [f"{len(index.documents)} indexed, backend {index.backend}; best matches for {query!r}:"]
    for row in rows:
        left = (cell.ljust(width) for cell, width in zip(row[2:5], widths[2:5], strict=True))
        cells = [row[0].rjust(widths[0]), row[1].rjust(widths[1]), *left]
        lines.append("  ".join([*cells, row[5]]).rstrip())
    return "\n".join(lines)
