"""The index builds off the event loop, in the background, one server at a time."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

import anyio
import pytest
from local_tools import RecordingTool

from toolsift.registry import ToolRegistry
from toolsift.search import SearchIndex
from toolsift.search._bm25 import Bm25Backend, Ranker
from toolsift.search._documents import SearchDocument


class WatchedBackend:
    """BM25 that records the thread of each build and lets a test wait for builds (thread-safely)."""

    name = "bm25"

    def __init__(self) -> None:
        self._bm25 = Bm25Backend()
        self.threads: list[int] = []
        self.sizes: list[int] = []
        self.built = threading.Event()
        self.failed = threading.Event()
        self.fail = False

    def build(self, documents: Sequence[SearchDocument]) -> Ranker:
        self.threads.append(threading.get_ident())
        self.sizes.append(len(documents))
        if self.fail:
            self.failed.set()
            raise RuntimeError("the embedding model went away")
        ranker = self._bm25.build(documents)
        self.built.set()
        return ranker

    async def wait(self) -> None:
        """Wait (in a worker thread, not on the loop) until a build finished, then re-arm."""
        assert await anyio.to_thread.run_sync(self.built.wait, 10)
        self.built.clear()


def tools(server: str, count: int) -> list[RecordingTool]:
    # Names differ by server: the same name and schema on two servers would be one group, ranked once.
    return [RecordingTool(f"{server}__{server}_tool_{i}", description=f"Tool {i} of {server}.") for i in range(count)]


async def test_asearch_builds_in_a_worker_thread_and_concurrent_searches_share_one_build() -> None:
    registry = ToolRegistry()
    registry.replace_server("a", tools("a", 50), internal=True)
    backend = WatchedBackend()
    index = SearchIndex(registry, backend=backend)
    loop_thread = threading.get_ident()
    backend.threads.clear()  # the empty build made by the constructor
    results: list[int] = []

    async def one() -> None:
        results.append(len(await index.asearch("tool of a", limit=5)))

    async with anyio.create_task_group() as group:
        for _ in range(4):
            group.start_soon(one)
    assert results == [5, 5, 5, 5]
    assert len(backend.threads) == 1 and backend.threads[0] != loop_thread
    assert not await index.arefresh()  # nothing changed since


async def test_maintain_builds_at_start_and_after_each_change_before_any_search() -> None:
    registry = ToolRegistry()
    registry.replace_server("a", tools("a", 10), internal=True)
    backend = WatchedBackend()
    index = SearchIndex(registry, backend=backend)
    backend.built.clear()
    async with anyio.create_task_group() as group:
        await group.start(index.maintain)
        await backend.wait()
        assert backend.sizes[-1] == 10
        registry.replace_server("b", tools("b", 5), internal=True)  # as a tools/list_changed would
        await backend.wait()
        assert backend.sizes[-1] == 15
        builds = index.builds
        assert [hit.document.name for hit in await index.asearch("tool 3 of b", limit=1)] == ["b__b_tool_3"]
        assert index.builds == builds  # the search found the index ready
        group.cancel_scope.cancel()


async def test_maintain_logs_a_failed_build_and_builds_again_at_the_next_change(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = ToolRegistry()
    registry.replace_server("a", tools("a", 3), internal=True)
    backend = WatchedBackend()
    index = SearchIndex(registry, backend=backend)
    backend.built.clear()
    backend.fail = True
    with caplog.at_level(logging.ERROR, logger="toolsift.search"):
        async with anyio.create_task_group() as group:
            await group.start(index.maintain)
            assert await anyio.to_thread.run_sync(backend.failed.wait, 10)
            backend.fail = False
            registry.replace_server("b", tools("b", 2), internal=True)
            await backend.wait()  # maintain is still running: it built after the change
            group.cancel_scope.cancel()
    assert "building the search index failed; searches will try again" in caplog.text
    assert "the embedding model went away" in caplog.text
    assert [hit.document.name for hit in index.search("tool 1 of b", limit=1)] == ["b__b_tool_1"]


def test_a_server_change_re_reads_only_the_documents_it_changes() -> None:
    registry = ToolRegistry()
    reader = RecordingTool("a__get_value", description="Return what put_value stored.")
    other = RecordingTool("a__list_keys", description="List every key.")
    registry.replace_server("a", [reader, other], internal=True)
    registry.replace_server("b", tools("b", 2), internal=True)
    index = SearchIndex(registry)
    before = {doc.name: doc for doc in index.documents}
    assert "put" in before["a__get_value"].fields["description"]  # put_value is no tool of a yet
    writer = RecordingTool("a__put_value", description="Store a value.")
    registry.replace_server("a", [reader, other, writer], internal=True)  # a list_changed adding put_value
    after = {doc.name: doc for doc in index.documents}
    assert after["a__list_keys"] is before["a__list_keys"] and after["b__b_tool_1"] is before["b__b_tool_1"]
    # get_value's description now names a sibling: re-read without it, so "put value" finds put_value alone.
    assert after["a__get_value"] is not before["a__get_value"]
    assert "put" not in after["a__get_value"].fields["description"]
    assert [hit.document.name for hit in index.search("put value")] == ["a__put_value"]
