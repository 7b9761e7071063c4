"""The search index over every tool (both tiers) and every skill.

Staying current: before each query the index compares the registry's
``generation``, the identities of the skill objects it indexed and the set of
unsearchable servers with what it built from; when anything differs it
rebuilds. That catches every path a change can take (a server's
``tools/list_changed`` swap, a skill edited on disk, a prompt list re-read, a
config reload) and costs one comparison when nothing changed.

Never stalling the event loop: :meth:`SearchIndex.asearch` (what
``search_tools`` uses) builds in a worker thread; only taking the registry's
tool list happens on the loop. :meth:`SearchIndex.maintain` rebuilds in the
background as soon as the registry changes, so the first search after start-up
or after a ``list_changed`` finds the index ready. A rebuild re-reads only the
servers whose tools changed (see ``_snapshot``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import replace
from itertools import islice
from typing import Literal, Protocol

import anyio
from anyio.abc import TaskStatus

from .._exceptions import ConfigError
from .._folders import user_cache_folder
from ..mcp_sessions import McpSession
from ..registry import ToolRegistry
from ..registry._internal import RegistryChange
from ._bm25 import Bm25Backend, SearchBackend
from ._documents import DocumentKind, IndexedSkill, SearchDocument
from ._hits import SearchHit, check_limit, ranked
from ._hybrid import bm25_and
from ._semantic import SERVER_SHARE, SemanticBackend, load_local_embedder
from ._snapshot import BuildInputs, Snapshot, SnapshotBuilder, unknown_server

__all__ = ["BACKENDS", "BackendName", "SearchHit", "SearchIndex", "SkillProvider", "server_descriptions"]

logger = logging.getLogger("toolsift.search")

BackendName = Literal["bm25", "semantic", "hybrid"]
BACKENDS: tuple[BackendName, ...] = ("bm25", "semantic", "hybrid")


class SkillProvider(Protocol):
    """Where the index reads skills from: a ``SkillSet``, a ``SkillCatalog``, ..."""

    def invocable(self) -> Sequence[IndexedSkill]:
        """The skills ``/use`` offers."""
        ...


def server_descriptions(sessions: Mapping[str, McpSession]) -> dict[str, str]:
    """What each connected server says of itself: its ``serverInfo`` title and description, and its instructions.

    The instructions are left out where the config keeps them from the model
    (``instructions: false``). Read before every search (a dict comparison when nothing changed); a server
    that reconnects with other texts has its documents rebuilt.
    """
    found: dict[str, str] = {}
    for name, session in sessions.items():
        instructions = session.instructions if session.config.instructions else None
        text = " ".join(part.strip() for part in (session.description, instructions) if part and part.strip())
        if text:
            found[name] = text
    return found


def backend_named(name: BackendName | SearchBackend) -> SearchBackend:
    """The backend called ``name`` (``bm25``, ``semantic``, ``hybrid``), or ``name`` itself.

    The semantic ones keep embeddings on disk in :func:`~toolsift._folders.user_cache_folder`.

    Raises:
        ConfigError: Unknown name, or a semantic backend without its package and model.
    """
    if not isinstance(name, str):
        return name
    if name == "bm25":
        return Bm25Backend()
    if name == "semantic":
        return SemanticBackend(load_local_embedder(), cache_folder=user_cache_folder())
    if name == "hybrid":
        return bm25_and(
            SemanticBackend(load_local_embedder(), cache_folder=user_cache_folder(), server_share=SERVER_SHARE)
        )
    raise ConfigError(f"unknown search backend {name!r}; available: {', '.join(BACKENDS)}", field="backend")


class SearchIndex:
    """Ranked search over a registry's tools and a set of skills.

    Args:
        registry: Every tool of it is indexed, internal ones included.
        skills: The skills to index (those ``/use`` offers); None indexes none.
        unsearchable: Servers whose tools (and prompts) never appear, by config
            name or tool namespace; a callable is read again before every query,
            so a config reload takes effect without rebuilding the index object.
        backend: ``bm25`` (default), ``semantic`` or ``hybrid`` (both need
            ``toolsift[semantic]``), or any :class:`SearchBackend`.
        server_descriptions: Server (config name or namespace) -> what it says of
            itself (its description, its handshake's instructions), indexed with
            each of its tools; a callable is read again before every query, and a
            changed text rebuilds that server's documents.

    Raises:
        ConfigError: Unknown backend name, or ``semantic``/``hybrid`` without the package and model.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        skills: SkillProvider | None = None,
        *,
        unsearchable: Collection[str] | Callable[[], Collection[str]] = (),
        backend: BackendName | SearchBackend = "bm25",
        server_descriptions: Mapping[str, str] | Callable[[], Mapping[str, str]] | None = None,
    ) -> None:
        self.registry = registry
        self.skills = skills
        self._unsearchable = unsearchable
        self._about = server_descriptions
        self._builder = SnapshotBuilder(backend_named(backend))
        # Generation -1 never matches the registry's: the first query builds.
        self._snapshot = self._builder.build(BuildInputs((-1, frozenset()), (), (), frozenset()))
        self._build_lock = threading.Lock()
        self._refreshing: anyio.Lock | None = None
        self.build_seconds = 0.0
        self.builds = 0

    @property
    def backend(self) -> str:
        """The ranking backend's name."""
        return self._builder.backend.name

    @property
    def documents(self) -> list[SearchDocument]:
        """Every indexed document (tools in registration order, then skills), after a refresh."""
        return list(self._current().documents)

    def unsearchable(self) -> frozenset[str]:
        """Servers kept out of the index, as configured right now."""
        value = self._unsearchable() if callable(self._unsearchable) else self._unsearchable
        return frozenset(value)

    def servers(self) -> frozenset[str]:
        """Servers with indexed tools or prompts, after a refresh."""
        return self._current().servers

    # -- building --------------------------------------------------------------------------

    def _changes(self) -> BuildInputs | None:
        """What a build needs, or None when the current snapshot is up to date (the common, cheap case)."""
        hidden = self.unsearchable()
        skills = tuple(self.skills.invocable()) if self.skills is not None else ()
        about = self._about() if callable(self._about) else self._about
        inputs = BuildInputs((self.registry.generation, hidden), (), skills, hidden, dict(about or {}))
        if inputs.same_as(self._snapshot):
            return None
        # Taken here, on the caller's thread: the registry is not thread-safe.
        return replace(inputs, tools=tuple(self.registry))

    def _build(self, inputs: BuildInputs) -> bool:
        with self._build_lock:
            if inputs.same_as(self._snapshot):  # built meanwhile by another caller
                return False
            started = time.perf_counter()
            self._snapshot = self._builder.build(inputs)
            self.build_seconds = time.perf_counter() - started
            self.builds += 1
            return True

    def refresh(self) -> bool:
        """Rebuild now, in this thread, if anything changed; True when it did.

        Blocks the caller for the build: async code should use :meth:`arefresh`.
        """
        inputs = self._changes()
        return False if inputs is None else self._build(inputs)

    async def arefresh(self) -> bool:
        """Rebuild in a worker thread if anything changed; True when this call did.

        Concurrent callers wait for one build. If cancelled, the caller stops
        waiting; a build already running in the worker thread still completes.
        """
        if self._refreshing is None:
            self._refreshing = anyio.Lock()
        async with self._refreshing:
            inputs = self._changes()
            if inputs is None:
                return False
            return await anyio.to_thread.run_sync(self._build, inputs, abandon_on_cancel=True)

    async def maintain(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Keep the index built in the background until cancelled: a build now, another after each change.

        Run it in a task group (``await tg.start(index.maintain)``): searches
        then find the index ready, after start-up and after a server's
        ``tools/list_changed``. Skill edits are picked up by the next search.
        A build that fails is logged and tried again at the next change (and
        by the next search, which reports the error to its caller).
        """
        changed = anyio.Event()

        def on_change(_: RegistryChange) -> None:
            changed.set()

        unsubscribe = self.registry.subscribe(on_change)
        try:
            task_status.started()
            while True:
                try:
                    await self.arefresh()
                except Exception:
                    logger.exception("building the search index failed; searches will try again")
                await changed.wait()
                changed = anyio.Event()
        finally:
            unsubscribe()

    def _current(self) -> Snapshot:
        self.refresh()
        return self._snapshot

    # -- querying ----------------------------------------------------------------------------

    def rank(
        self,
        query: str,
        *,
        server: str | None = None,
        kind: DocumentKind | None = None,
        accept: Callable[[SearchDocument], bool] | None = None,
    ) -> Iterator[SearchHit]:
        """Every matching document, best first; see :meth:`search`. Refreshes in this thread first."""
        return ranked(self._checked(self._current(), server), self.registry, query, server, kind, accept)

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        server: str | None = None,
        kind: DocumentKind | None = None,
        accept: Callable[[SearchDocument], bool] | None = None,
    ) -> list[SearchHit]:
        """The best ``limit`` hits for ``query``, refreshing the index in this thread first.

        When the whole query is a tool's or a skill's name (written any way:
        ``memory_store``, ``Memory-Store``, ``memory store``,
        ``claude-flow__memory_store``, a provider alias), only that is returned:
        the caller knows what it wants. A word written as an identifier inside a
        longer query (``use memory_compress``) puts that tool first. Plain words
        never count as names ("echo the swarm status" does not pick ``echo``).
        The same tool on several servers is one hit (see :attr:`SearchHit.members`);
        documents sharing nothing with the query are not returned.

        Args:
            query: Free text, tool names, or both.
            limit: How many hits at most.
            server: Only tools (and prompts) of this server.
            kind: Only ``tool`` or only ``skill`` documents.
            accept: Keeps only the documents (group members included) it returns True for.

        Raises:
            ValueError: ``limit`` is below 1.
            LookupError: ``server`` names no searchable server; the message lists them.
        """
        check_limit(limit)
        return list(islice(self.rank(query, server=server, kind=kind, accept=accept), limit))

    async def asearch(
        self,
        query: str,
        *,
        limit: int = 10,
        server: str | None = None,
        kind: DocumentKind | None = None,
        accept: Callable[[SearchDocument], bool] | None = None,
    ) -> list[SearchHit]:
        """:meth:`search` for async code: a needed rebuild runs in a worker thread (see :meth:`arefresh`)."""
        check_limit(limit)
        await self.arefresh()
        snapshot = self._checked(self._snapshot, server)
        return list(islice(ranked(snapshot, self.registry, query, server, kind, accept), limit))

    async def tool_names(self) -> frozenset[str]:
        """The canonical names of every indexed tool, after a refresh in a worker thread."""
        await self.arefresh()
        return self._snapshot.tool_names

    async def indexed(self, name: str) -> str | None:
        """The canonical name of the indexed tool called ``name`` (canonically or by alias), or None.

        Tools of unsearchable servers are not indexed, so they are None too.
        """
        await self.arefresh()
        if name not in self.registry:
            return None
        canonical = self.registry.resolve(name)
        return canonical if canonical in self._snapshot.tools else None

    @staticmethod
    def _checked(snapshot: Snapshot, server: str | None) -> Snapshot:
        if server is not None and server not in snapshot.servers:
            raise LookupError(unknown_server(server, snapshot.servers))
        return snapshot
