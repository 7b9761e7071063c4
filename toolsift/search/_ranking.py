"""The ranking as a person reads it: what ``toolsift tools --search "query"`` prints."""

from __future__ import annotations

from ._documents import quoted
from ._index import SearchIndex

__all__ = ["format_ranking"]


def format_ranking(index: SearchIndex, query: str, *, limit: int = 10, server: str | None = None) -> str:
    """One line per hit, best first: rank, score, kind, name, server and one-line description.

    A hit that meets little of the query has ``weak`` after its score.

    Every indexed tool is ranked, internal ones included: this shows what the
    index holds, not what a given agent may call (``search_tools`` applies the
    permission layers).

    The same tool on several servers is one line, its server shown as
    ``first +N`` (N more servers). A long query is cut where it is echoed.

    Raises:
        ValueError: ``limit`` is below 1.
        LookupError: ``server`` names no searchable server.
    """
    hits = index.search(query, limit=limit, server=server)
    shown = quoted(query)
    if not hits:
        return f"No tool or skill matches {shown} ({len(index.documents)} indexed, backend {index.backend})."
    rows = []
    for rank, hit in enumerate(hits, start=1):
        doc = hit.document
        score = "exact" if hit.exact else f"{hit.score:.2f}" + (" weak" if hit.weak else "")
        servers = hit.servers
        where = (servers[0] + (f" +{len(servers) - 1}" if len(servers) > 1 else "")) if servers else "-"
        rows.append((str(rank), score, doc.kind, doc.name, where, doc.summary))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = [f"{len(index.documents)} indexed, backend {index.backend}; best matches for {shown}:"]
    for row in rows:
        left = (cell.ljust(width) for cell, width in zip(row[2:5], widths[2:5], strict=True))
        cells = [row[0].rjust(widths[0]), row[1].rjust(widths[1]), *left]
        lines.append("  ".join([*cells, row[5]]).rstrip())
    return "\n".join(lines)
