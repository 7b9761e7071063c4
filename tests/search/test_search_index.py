"""The search index stays current: registry swaps (``tools/list_changed``), skill edits, config changes."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from local_tools import RecordingTool
from mcp_helpers import faulty, in_memory, stdio_server, wait_for

from toolsift import ConfigError
from toolsift.mcp_sessions import McpSession
from toolsift.registry import ToolRegistry
from toolsift.search import SearchIndex, SkillCatalog
from toolsift.search._bm25 import Bm25Backend
from toolsift.search._documents import one_line
from toolsift.search._internal import format_ranking
from toolsift.search._semantic import SemanticBackend
from toolsift.skills import SkillsLoader

SKILL = """---
name: {name}
description: {description}
---
{body}
"""


def names(index: SearchIndex, query: str, **kwargs: Any) -> list[str]:
    return [hit.document.name for hit in index.search(query, **kwargs)]


def test_index_rebuilds_only_when_something_changed() -> None:
    registry = ToolRegistry()
    registry.register(RecordingTool("read_file", description="Read a text file from the workspace."))
    index = SearchIndex(registry)
    assert names(index, "read a file") == ["read_file"]
    assert index.builds == 1 and index.build_seconds > 0
    names(index, "read a file")
    assert index.builds == 1
    registry.register(RecordingTool("git__commit", description="Record staged changes in a git commit."))
    assert names(index, "commit staged changes") == ["git__commit"]
    assert index.builds == 2
    registry.replace_server("git", [RecordingTool("git__push", description="Push commits to a remote.")], internal=True)
    assert names(index, "commit staged changes") == ["git__push"]  # "commit" now only in git__push
    assert names(index, "push to the remote") == ["git__push"]
    registry.remove_server("git")
    assert names(index, "push") == []


def test_index_reuses_the_documents_of_unchanged_tools() -> None:
    registry = ToolRegistry()
    first = RecordingTool("a__one", description="First tool.")
    registry.register(first)
    index = SearchIndex(registry)
    before = index.documents[0]
    registry.register(RecordingTool("a__two", description="Second tool."))
    after = index.documents
    assert after[0] is before and [d.name for d in after] == ["a__one", "a__two"]


def test_index_follows_the_unsearchable_servers_as_configured_now() -> None:
    registry = ToolRegistry()
    registry.replace_server("vault", [RecordingTool("vault__read_secret", description="Read a secret.")], internal=True)
    hidden: set[str] = set()
    index = SearchIndex(registry, unsearchable=lambda: hidden)
    assert names(index, "secret") == ["vault__read_secret"]
    hidden.add("vault")
    assert names(index, "secret") == [] and names(index, "vault__read_secret") == []
    assert index.unsearchable() == {"vault"}


def test_index_updates_after_skill_edits(tmp_path: Path) -> None:
    folder = tmp_path / "skills"
    (folder / "tidy").mkdir(parents=True)
    skill_file = folder / "tidy" / "SKILL.md"
    skill_file.write_text(SKILL.format(name="tidy", description="Tidy the imports of a module.", body="Sort them."))
    loader = SkillsLoader(project=folder)
    index = SearchIndex(ToolRegistry(), SkillCatalog(loader))
    assert names(index, "sort imports") == ["tidy"]
    skill_file.write_text(SKILL.format(name="tidy", description="Rename variables for clarity.", body="Be brief."))
    loader.reload()
    assert names(index, "sort imports") == []
    assert names(index, "rename variables") == ["tidy"]


async def test_index_updates_after_tools_list_changed() -> None:
    registry = ToolRegistry()
    index = SearchIndex(registry)
    # Handshake era: its list_changed notification cannot arrive before the client listens for it.
    config, options = stdio_server("faulty", "faulty.py", protocol="legacy"), in_memory({"faulty": faulty()})
    async with McpSession(config, registry=registry, options=options) as session:
        assert names(index, "echo the text") == ["faulty__echo"]
        assert names(index, "zebra") == []
        result = await session.call_tool("add_tool", {"name": "zebra"})
        assert not result.is_error
        await wait_for(session, lambda s: "faulty__zebra" in registry)
        assert names(index, "zebra") == ["faulty__zebra"]
        await session.call_tool("remove_tool", {"name": "zebra"})
        await wait_for(session, lambda s: "faulty__zebra" not in registry)
        assert names(index, "zebra") == []
    assert names(index, "echo the text") == []  # the closed session's tools left the registry


def test_index_rejects_an_unknown_backend() -> None:
    with pytest.raises(ConfigError, match="backend: unknown search backend 'vector'; available: bm25, semantic"):
        SearchIndex(ToolRegistry(), backend="vector")  # type: ignore[arg-type]


def test_bm25_backend_on_an_empty_index_scores_nothing() -> None:
    assert Bm25Backend().build([]).scores("anything").shape == (0,)
    index = SearchIndex(ToolRegistry())
    assert index.search("anything") == [] and index.backend == "bm25"


def test_format_ranking_shows_rank_score_and_description() -> None:
    registry = ToolRegistry()
    registry.register_many(
        [
            RecordingTool("read_file", description="Read a text file. Binary files are refused."),
            RecordingTool("git__log", description="Show the commit log of a file."),
        ]
    )
    index = SearchIndex(registry)
    lines = format_ranking(index, "read a file").splitlines()
    assert lines[0] == "2 indexed, backend bm25; best matches for 'read a file':"
    assert lines[1].split()[:4] == ["1", lines[1].split()[1], "tool", "read_file"]
    assert lines[1].endswith("Read a text file.")
    assert "git__log" in lines[2] and " git " in lines[2]
    assert format_ranking(index, "git__log").splitlines()[1].split()[:3] == ["1", "exact", "tool"]
    assert format_ranking(index, "quux") == "No tool or skill matches 'quux' (2 indexed, backend bm25)."


def test_one_line_takes_the_first_sentence_and_cuts_long_ones() -> None:
    assert one_line("Read a file. Then more.\n\nDetails.") == "Read a file."
    assert one_line("Spans\nlines. Next.") == "Spans lines."
    assert one_line("x" * 300, limit=10) == "x" * 9 + "\u2026"
    assert one_line("") == ""


# -- the optional semantic backend ---------------------------------------------------------------------------


class HashingEmbedder:
    """A deterministic stand-in for a sentence model: hashed bag of words, plus one synonym pair."""

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def __call__(self, texts: Sequence[str]) -> Any:
        self.embedded.extend(texts)
        rows = np.zeros((len(texts), 64), dtype=np.float64)
        for row, text in enumerate(texts):
            for word in text.lower().replace("persist", "store").split():
                rows[row, int(hashlib.sha1(word.strip(".,").encode()).hexdigest(), 16) % 64] += 1
        return rows


def test_semantic_backend_ranks_by_embeddings_and_embeds_only_new_documents() -> None:
    registry = ToolRegistry()
    registry.register_many(
        [RecordingTool("kv__store", description="store a value"), RecordingTool("kv__drop", description="drop a value")]
    )
    embedder = HashingEmbedder()
    index = SearchIndex(registry, backend=SemanticBackend(embedder))
    assert index.backend == "semantic"
    assert names(index, "persist")[0] == "kv__store"  # no shared term: found by the embedding alone
    embedded = len(embedder.embedded)
    registry.register(RecordingTool("kv__list", description="list the values"))
    names(index, "show every value")
    assert len(embedder.embedded) == embedded + 2  # the new document, then the query


def test_semantic_backend_without_documents_scores_nothing() -> None:
    assert SemanticBackend(HashingEmbedder()).build([]).scores("x").shape == (0,)


def test_index_keeps_skill_documents_when_only_tools_change_and_finds_a_skill_by_name() -> None:
    registry = ToolRegistry()
    skills = SkillsLoader(project=Path(__file__).resolve().parents[2] / "examples" / "skills").load()
    index = SearchIndex(registry, skills)
    before = {doc.name: doc for doc in index.documents if doc.kind == "skill"}
    registry.register(RecordingTool("read_file", description="Read a file."))
    after = {doc.name: doc for doc in index.documents if doc.kind == "skill"}
    assert all(after[name] is doc for name, doc in before.items())
    hits = index.search("flow-memory")
    assert [(hit.document.name, hit.exact) for hit in hits] == [("flow-memory", True)]
