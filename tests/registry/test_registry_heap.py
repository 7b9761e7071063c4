"""Heap settling, when asked for: large registrations freeze the heap, after collecting what is garbage."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
from local_tools import RecordingTool

from toolsift.registry import ToolRegistry, TurnScope, _heap
from toolsift.registry._heap import HeapSettler


class Node:
    """A small object that can hold a reference cycle."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def unfreeze() -> Iterator[None]:
    yield
    gc.unfreeze()


def test_the_first_registration_of_a_process_settles_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_heap, "_frozen_before", False)
    settler = HeapSettler(threshold=10)
    settler.note(1)
    assert settler.settled == 1 and gc.get_freeze_count() > 0


def test_a_settler_waits_for_its_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_heap, "_frozen_before", True)
    settler = HeapSettler(threshold=10)
    settler.note(9)
    assert settler.settled == 0
    settler.note(1)
    assert settler.settled == 1 and gc.get_freeze_count() > 0
    settler.note(9)
    assert settler.settled == 1


def test_young_garbage_is_collected_not_frozen() -> None:
    cycle = Node()
    gone = weakref.ref(cycle)
    del cycle
    HeapSettler().settle()
    assert gone() is None


def test_old_garbage_is_collected_once_something_is_frozen() -> None:
    HeapSettler().settle()
    cycle = Node()
    gone = weakref.ref(cycle)
    gc.collect(1)
    gc.collect(1)  # survived twice: it now sits in the oldest generation
    del cycle
    HeapSettler().settle()
    assert gone() is None


def test_a_default_registry_leaves_the_host_heap_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_heap, "_frozen_before", False)  # the first registration of a settling process freezes
    gc.unfreeze()  # what an earlier test of this process froze
    registry = ToolRegistry()
    registry.replace_server("big", [RecordingTool(f"big__t{i}") for i in range(5_000)], internal=False)
    registry.schemas_for_tools(format="openai")
    registry.schemas_for_tools(format="anthropic")
    assert gc.get_freeze_count() == 0


def test_registry_settles_after_large_registrations_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen: list[int] = []
    monkeypatch.setattr(_heap, "_frozen_before", True)
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    tools = [RecordingTool(f"big__t{i}") for i in range(2_000)]
    ToolRegistry().replace_server("big", tools, internal=True)
    assert frozen == []
    registry = ToolRegistry(settle_heap=True)
    registry.replace_server("big", tools[:1_999], internal=True)
    assert frozen == []
    registry.replace_server("big", tools, internal=True)
    assert frozen == [1]


def test_registry_settles_after_large_exports_but_not_for_schemas_it_already_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frozen: list[int] = []
    monkeypatch.setattr(_heap, "_frozen_before", True)
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    registry = ToolRegistry(settle_heap=True)
    registry.register_many([RecordingTool(f"t{i}") for i in range(900)])
    registry.schemas_for_tools(format="openai")
    assert frozen == []  # 900 tools and 900 declarations: under the threshold of 2,000
    registry.schemas_for_tools(TurnScope(skill_allowed=("t1*",)), format="openai")
    assert frozen == []  # the same declarations, listed again for another scope
    registry.schemas_for_tools(format="anthropic")
    assert frozen == [1]


def test_a_settler_ignores_notes_of_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_heap, "_frozen_before", False)
    settler = HeapSettler(threshold=10)
    settler.note(0)
    assert settler.settled == 0
