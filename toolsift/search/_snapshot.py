"""One build of the search index: documents, their ranker, exact names and groups, made per server.

A :class:`Snapshot` is immutable: queries read the current one while the next
is built in a worker thread, and the index swaps it in with one assignment.
:class:`SnapshotBuilder` keeps what each server contributed last time (its tool
objects and their documents), so a rebuild after one server's
``tools/list_changed`` re-reads that server's tools only; the other servers'
documents, and their term ids inside the backend, are reused.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from .._names import split_name
from ..registry import Tool
from ._bm25 import Ranker, SearchBackend
from ._documents import IndexedSkill, SearchDocument, local_name, mentions, skill_document, tool_document
from ._pace import paced
from ._tokens import name_key

__all__ = ["BuildInputs", "Snapshot", "SnapshotBuilder", "skill_server", "unknown_server"]


def skill_server(skill: IndexedSkill) -> str | None:
    """The server a skill comes from (server prompts), else None."""
    server = getattr(skill, "server", None)
    return server if isinstance(server, str) else None


@dataclass(frozen=True)
class BuildInputs:
    """What a build reads, taken on the event loop in one go (the registry is not thread-safe).

    Attributes:
        key: The registry generation and the unsearchable servers.
        tools: Every registered tool, in registration order.
        skills: The skills to index.
        hidden: Unsearchable servers (config names or namespaces).
        about: Server (config name or namespace) -> what it says of itself.
    """

    key: tuple[int, frozenset[str]]
    tools: tuple[Tool, ...]
    skills: tuple[IndexedSkill, ...]
    hidden: frozenset[str]
    about: Mapping[str, str] = field(default_factory=dict)

    def same_as(self, snapshot: Snapshot) -> bool:
        """True when ``snapshot`` was built from the same registry state, servers, their texts and skill objects."""
        if snapshot.key != self.key or snapshot.about != self.about or len(snapshot.skills) != len(self.skills):
            return False
        return all(a is b for a, b in zip(self.skills, snapshot.skills, strict=True))


@dataclass(frozen=True)
class Snapshot:
    """One build: what a query reads.

    Attributes:
        key: See :class:`BuildInputs`.
        skills: The skill objects indexed (compared by identity to detect edits).
        documents: Tools (in registration order) then skills.
        ranked: One document per group (the group's first), in the order of ``documents``.
        ranker: The backend's ranker over ``ranked``.
        tools: Canonical name -> document.
        skill_docs: Skill name -> document.
        names: :func:`name_key` of a tool's canonical name and of its name on its
            server -> canonical names.
        skill_names: :func:`name_key` of a skill name -> skill name.
        groups: Document identity -> positions of the documents sharing it.
        servers: Servers with indexed tools or prompts.
        tool_names: The canonical names of the indexed tools.
        about: See :class:`BuildInputs`.
    """

    key: tuple[int, frozenset[str]]
    skills: tuple[IndexedSkill, ...]
    documents: list[SearchDocument]
    ranked: list[SearchDocument]
    ranker: Ranker
    tools: dict[str, SearchDocument]
    skill_docs: dict[str, SearchDocument]
    names: dict[str, list[str]]
    skill_names: dict[str, str]
    groups: dict[str, list[int]]
    servers: frozenset[str] = field(default_factory=frozenset)
    tool_names: frozenset[str] = field(default_factory=frozenset)
    about: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Entry:
    """One tool's document, and the sibling names its description mentions (which change it)."""

    tool: Tool
    document: SearchDocument
    mentions: frozenset[str]
    removed: frozenset[str]

    @classmethod
    def of(cls, tool: Tool, siblings: frozenset[str], about: str) -> _Entry:
        named = mentions(tool.spec.description)
        return cls(tool, tool_document(tool.spec, siblings=siblings, about=about), named, named & siblings)

    def still_valid(self, tool: Tool, siblings: frozenset[str]) -> bool:
        """Same tool object, and its description names the same siblings as before."""
        return tool is self.tool and self.mentions & siblings == self.removed


@dataclass(frozen=True)
class _Shard:
    """What one server (tool namespace) contributed to the last build."""

    tools: tuple[Tool, ...]
    entries: dict[int, _Entry]
    about: str

    @property
    def documents(self) -> list[SearchDocument]:
        return [self.entries[id(tool)].document for tool in self.tools]

    def holds(self, tools: tuple[Tool, ...], about: str) -> bool:
        return (
            about == self.about
            and len(tools) == len(self.tools)
            and all(a is b for a, b in zip(tools, self.tools, strict=True))
        )


def _about(tool: Tool, namespace: str | None, about: Mapping[str, str]) -> str:
    """What the tool's server says of itself, found by config name or by namespace."""
    if not about:
        return ""
    return about.get(tool.spec.server or "") or about.get(namespace or "", "")


def _hidden(tool: Tool, namespace: str | None, hidden: frozenset[str]) -> bool:
    return bool(hidden) and (namespace in hidden or tool.spec.server in hidden)


class SnapshotBuilder:
    """Builds snapshots, re-reading only the servers whose tool objects changed.

    Not thread-safe: one build at a time (the index holds a lock around it).
    """

    def __init__(self, backend: SearchBackend) -> None:
        self.backend = backend
        self._shards: dict[str | None, _Shard] = {}
        self._skill_docs: dict[int, tuple[IndexedSkill, SearchDocument]] = {}

    def build(self, inputs: BuildInputs) -> Snapshot:
        """A snapshot of ``inputs``."""
        by_namespace: dict[str | None, list[Tool]] = {}
        for tool in paced(inputs.tools):
            namespace = split_name(tool.spec.name)[0]
            if not _hidden(tool, namespace, inputs.hidden):
                by_namespace.setdefault(namespace, []).append(tool)
        shards = {
            namespace: self._shard(namespace, tuple(tools), _about(tools[0], namespace, inputs.about))
            for namespace, tools in by_namespace.items()
        }
        self._shards = shards
        skills = [skill for skill in inputs.skills if skill_server(skill) not in inputs.hidden]
        skill_docs = {id(skill): self._skill_doc(skill) for skill in skills}
        self._skill_docs = skill_docs
        documents = [doc for shard in shards.values() for doc in shard.documents]
        tool_count = len(documents)
        documents += [skill_docs[id(skill)][1] for skill in skills]
        return self._snapshot(inputs, documents, tool_count)

    def _shard(self, namespace: str | None, tools: tuple[Tool, ...], about: str) -> _Shard:
        old = self._shards.get(namespace)
        if old is not None and old.holds(tools, about):
            return old
        if old is not None and old.about != about:  # every document of the server holds its text
            old = None
        siblings = frozenset(name_key(local_name(tool.spec)) for tool in tools)
        entries = {}
        for tool in paced(tools):
            cached = old.entries.get(id(tool)) if old is not None else None
            if cached is None or not cached.still_valid(tool, siblings):
                cached = _Entry.of(tool, siblings, about)
            entries[id(tool)] = cached
        return _Shard(tools, entries, about)

    def _skill_doc(self, skill: IndexedSkill) -> tuple[IndexedSkill, SearchDocument]:
        cached = self._skill_docs.get(id(skill))
        if cached is not None and cached[0] is skill:
            return cached
        return skill, skill_document(skill, server=skill_server(skill))

    def _snapshot(self, inputs: BuildInputs, documents: list[SearchDocument], tool_count: int) -> Snapshot:
        tools = {doc.name: doc for doc in documents[:tool_count]}
        names: dict[str, list[str]] = {}
        for doc in paced(documents[:tool_count]):
            # name_key(namespace) + name_key(bare) is name_key(canonical), from two small caches.
            namespace, bare = split_name(doc.name)
            canonical = f"{name_key(namespace)}_{name_key(bare)}" if namespace else name_key(bare)
            for key in dict.fromkeys((canonical, name_key(doc.local_name))):
                names.setdefault(key, []).append(doc.name)
        groups: dict[str, list[int]] = {}
        for position, doc in enumerate(paced(documents)):
            groups.setdefault(doc.identity, []).append(position)
        # The same tool on thirty servers is ranked once: its first document stands for the group.
        ranked = [documents[positions[0]] for positions in groups.values()]
        return Snapshot(
            key=inputs.key,
            skills=inputs.skills,
            documents=documents,
            ranked=ranked,
            ranker=self.backend.build(ranked),
            tools=tools,
            skill_docs={doc.name: doc for doc in documents[tool_count:]},
            names=names,
            skill_names={name_key(doc.name): doc.name for doc in documents[tool_count:]},
            groups=groups,
            servers=frozenset(doc.server for doc in documents if doc.server is not None),
            tool_names=frozenset(tools),
            about=inputs.about,
        )


def unknown_server(server: str, known: Collection[str]) -> str:
    """The message for a ``server`` filter that names no searchable server."""
    listed = ", ".join(sorted(known)) or "none"
    return f"no searchable server is called {server!r}; servers with indexed tools: {listed}"
