"""The search index over every tool (both tiers) and every skill.

Staying current: the index never needs to be told. Before each query it
compares the registry's ``generation``, the identities of the skill objects it
indexed and the set of unsearchable servers with what it built from; when
anything differs it rebuilds. That catches every path a change can take (a
server's ``tools/list_changed`` swap, a skill edited on disk, a prompt list
re-read, a config reload) without subscriptions whose lifetimes would have to
be managed, and costs one integer comparison when nothing changed.

A rebuild is incremental where it matters: each tool's and skill's document
(its terms) is cached by object identity, so only tools and skills that are new
or were replaced are tokenised again; the BM25 matrix is then rebuilt as a
whole (``bm25s`` has no per-document update), which takes about 0.3 s for
10,000 tools.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Literal, Protocol

import numpy as np

from .._exceptions import ConfigError
from ..registry import Tool, ToolRegistry, split_name
from ._bm25 import Bm25Backend, SearchBackend
from ._documents import DocumentKind, IndexedSkill, SearchDocument, skill_document, tool_document
from ._semantic import SemanticBackend, load_local_embedder

__all__ = ["SearchHit", "SearchIndex", "SkillProvider"]

BackendName = Literal["bm25", "semantic"]
BACKENDS: tuple[BackendName, ...] = ("bm25", "semantic")

# An exact name may be given alone or among other words ("memory_store or memory_search").
_NAME_CANDIDATES = re.compile(r"[^\s,;`'\"()]+")


class SkillProvider(Protocol):
    """Where the index reads skills from: a ``SkillSet``, a ``SkillCatalog``, ..."""

    def invocable(self) -> Sequence[IndexedSkill]:
        """The skills ``/use`` offers."""
        ...


@dataclass(frozen=True)
class SearchHit:
    """One ranked result.

    Attributes:
        document: What matched.
        score: The backend's score (``inf`` for an exact name match).
        exact: True when the query named the tool exactly.
    """

    document: SearchDocument
    score: float
    exact: bool = False


def _backend(backend: BackendName | SearchBackend) -> SearchBackend:
    if not isinstance(backend, str):
        return backend
    if backend == "bm25":
        return Bm25Backend()
    if backend == "semantic":
        return SemanticBackend(load_local_embedder())
    raise ConfigError(f"unknown search backend {backend!r}; available: {', '.join(BACKENDS)}", field="backend")


class SearchIndex:
    """Ranked search over a registry's tools and a set of skills.

    Args:
        registry: Every tool of it is indexed, internal ones included.
        skills: The skills to index (those ``/use`` offers); None indexes none.
        unsearchable: Servers whose tools (and prompts) never appear, by config
            name or tool namespace; a callable is read again before every query,
            so a config reload takes effect without rebuilding the index object.
        backend: ``bm25`` (default), ``semantic`` (needs ``toolsift[semantic]``),
            or any :class:`SearchBackend`.

    Raises:
        ConfigError: Unknown backend name, or ``semantic`` without its package and model.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        skills: SkillProvider | None = None,
        *,
        unsearchable: Collection[str] | Callable[[], Collection[str]] = (),
        backend: BackendName | SearchBackend = "bm25",
    ) -> None:
        self.registry = registry
        self.skills = skills
        self._unsearchable = unsearchable
        self._backend = _backend(backend)
        self._tool_docs: dict[str, tuple[Tool, SearchDocument]] = {}
        self._skill_docs: dict[str, tuple[IndexedSkill, SearchDocument]] = {}
        self._documents: list[SearchDocument] = []
        self._tool_positions: dict[str, int] = {}
        self._remote_names: dict[str, list[str]] = {}
        self._built_for: tuple[int, frozenset[str]] | None = None
        self._skill_objects: tuple[IndexedSkill, ...] = ()
        self.build_seconds = 0.0
        self.builds = 0

    @property
    def backend(self) -> str:
        """The ranking backend's name."""
        return self._backend.name

    @property
    def documents(self) -> list[SearchDocument]:
        """Every indexed document (tools in registration order, then skills), after a refresh."""
        self.refresh()
        return list(self._documents)

    def unsearchable(self) -> frozenset[str]:
        """Servers kept out of the index, as configured right now."""
        value = self._unsearchable() if callable(self._unsearchable) else self._unsearchable
        return frozenset(value)

    # -- building --------------------------------------------------------------------------

    def refresh(self) -> bool:
        """Rebuild if the registry, the skills or the searchable servers changed; True when it did."""
        hidden = self.unsearchable()
        skills = tuple(self.skills.invocable()) if self.skills is not None else ()
        key = (self.registry.generation, hidden)
        same_skills = len(skills) == len(self._skill_objects) and all(
            a is b for a, b in zip(skills, self._skill_objects, strict=True))
        if key == self._built_for and same_skills:
            return False
        started = time.perf_counter()
        tools = [tool for tool in self.registry if not self._hidden(tool, hidden)]
        self._tool_docs = {t.spec.name: self._tool_doc(t) for t in tools}
        self._skill_docs = {
            s.name: self._skill_doc(s) for s in skills if _skill_server(s) not in hidden
        }
        self._documents = [doc for _, doc in self._tool_docs.values()] + [d for _, d in self._skill_docs.values()]
        self._tool_positions = {name: i for i, name in enumerate(self._tool_docs)}
        self._remote_names = {}
        for tool in tools:
            remote = tool.spec.remote_name
            if remote is not None:
                self._remote_names.setdefault(remote, []).append(tool.spec.name)
        self._backend.build(self._documents)
        self._built_for, self._skill_objects = key, skills
        self.build_seconds = time.perf_counter() - started
        self.builds += 1
        return True

    @staticmethod
    def _hidden(tool: Tool, hidden: frozenset[str]) -> bool:
        if not hidden:
            return False
        namespace, _ = split_name(tool.spec.name)
        return namespace in hidden or tool.spec.server in hidden

    def _tool_doc(self, tool: Tool) -> tuple[Tool, SearchDocument]:
        cached = self._tool_docs.get(tool.spec.name)
        return cached if cached is not None and cached[0] is tool else (tool, tool_document(tool.spec))

    def _skill_doc(self, skill: IndexedSkill) -> tuple[IndexedSkill, SearchDocument]:
        cached = self._skill_docs.get(skill.name)
        if cached is not None and cached[0] is skill:
            return cached
        return skill, skill_document(skill, server=_skill_server(skill))

    # -- querying ----------------------------------------------------------------------------

    def rank(self, query: str, *, server: str | None = None, kind: DocumentKind | None = None) -> Iterator[SearchHit]:
        """Every matching document, best first: exact names, then by score.

        A word of ``query`` that is a tool's canonical name, provider alias, or
        its name on its own server (``memory_store`` for
        ``claude-flow__memory_store``) always comes first: ranking alone can miss
        a tool the caller named. When the whole query is one tool's or one
        skill's exact name, only that is yielded: the caller knows what it wants,
        and near matches would only cost context. Documents that share nothing
        with the query are not yielded.

        Args:
            query: Free text, tool names, or both.
            server: Only tools (and prompts) of this server.
            kind: Only ``tool`` or only ``skill`` documents.
        """
        self.refresh()
        whole = query.strip()
        skill = self._skill_docs.get(whole)
        exact_skill = skill[1] if skill is not None and (server is None or skill[1].server == server) else None
        named_alone = bool(self._resolve(whole, server)) or exact_skill is not None
        seen: set[int] = set()
        if kind in (None, "tool"):
            for name in self._exact_names(query, server):
                # Tool documents come first in _documents, in _tool_docs order.
                seen.add(self._tool_positions[name])
                yield SearchHit(self._tool_docs[name][1], float("inf"), exact=True)
        if exact_skill is not None and kind in (None, "skill"):
            yield SearchHit(exact_skill, float("inf"), exact=True)
        if named_alone:
            return
        scores = self._backend.scores(query)
        candidates = np.flatnonzero(scores > 0)
        order = candidates[np.argsort(-scores[candidates], kind="stable")]
        for position in order.tolist():
            doc = self._documents[position]
            if position in seen or (kind is not None and doc.kind != kind):
                continue
            if server is not None and doc.server != server:
                continue
            yield SearchHit(doc, float(scores[position]))

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        server: str | None = None,
        kind: DocumentKind | None = None,
        accept: Callable[[SearchDocument], bool] | None = None,
    ) -> list[SearchHit]:
        """The best ``limit`` hits of :meth:`rank` that ``accept`` keeps.

        Raises:
            ValueError: ``limit`` is below 1.
        """
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit!r}")
        hits: Iterable[SearchHit] = self.rank(query, server=server, kind=kind)
        if accept is not None:
            hits = (hit for hit in hits if accept(hit.document))
        return list(islice(hits, limit))

    def _exact_names(self, query: str, server: str | None) -> list[str]:
        words = dict.fromkeys([query.strip(), *_NAME_CANDIDATES.findall(query)])
        return list(dict.fromkeys(name for word in words if word for name in self._resolve(word, server)))

    def _resolve(self, word: str, server: str | None) -> list[str]:
        """Indexed tools that ``word`` names exactly (canonically, by alias, or by their server's name)."""
        if word in self.registry:
            names = [self.registry.resolve(word)]
        elif server is not None and f"{server}__{word}" in self.registry:
            names = [f"{server}__{word}"]
        else:
            names = self._remote_names.get(word, [])
        return [n for n in names if n in self._tool_docs and (server is None or self._tool_docs[n][1].server == server)]

def _skill_server(skill: IndexedSkill) -> str | None:
    """The server a skill comes from (server prompts), else None."""
    server = getattr(skill, "server", None)
    return server if isinstance(server, str) else None
