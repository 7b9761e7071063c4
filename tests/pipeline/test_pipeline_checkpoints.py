"""Checkpoints: stages that need not wrap the call run in one loop, with the order and results of nesting."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from toolsift.pipeline import Middleware, Pipeline
from toolsift.pipeline._call import refusal_of
from toolsift.pipeline._checkpoint import Checkpoint
from toolsift.pipeline._internal import refuse
from toolsift.registry import CallHandler, CallRecord, ToolRegistry, ToolResult, TurnScope, tool


@tool(read_only=True)
def echo(text: str) -> str:
    """Say it back."""
    return text


class Marker(Checkpoint):
    """Renames the skill of the call on the way in, notes what it saw on the way out; may refuse."""

    def __init__(self, handler: CallHandler, *, label: str, log: list[str], refuse_all: bool = False) -> None:
        super().__init__(handler)
        self._label, self._log, self._refuse_all = label, log, refuse_all

    def enter(self, call: CallRecord) -> CallRecord | ToolResult:
        self._log.append(f"in:{self._label}:{call.scope.skill}")
        if self._refuse_all:
            return refuse(self._label, f"{self._label} refused")
        return replace(call, scope=replace(call.scope, skill=self._label))

    def leave(self, call: CallRecord, result: ToolResult, seconds: float) -> ToolResult:
        assert seconds >= 0
        self._log.append(f"out:{self._label}:{call.scope.skill}:{result.text_content()}")
        return result


class Wrapper:
    """A stage of the nesting kind, which makes the pipeline nest every stage."""

    def __init__(self, handler: CallHandler, *, log: list[str]) -> None:
        self._handler, self._log = handler, log

    async def __call__(self, call: CallRecord) -> ToolResult:
        self._log.append("in:wrapper")
        result = await self._handler(call)
        self._log.append("out:wrapper")
        return result


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(echo)
    return registry


async def run(
    registry: ToolRegistry, middleware: list[Middleware[Any]], log: list[str]
) -> tuple[ToolResult, list[str]]:
    result = await Pipeline.for_registry(registry, middleware).handle(
        CallRecord("echo", {"text": "hi"}, TurnScope(skill="caller"))
    )
    return result, [entry for entry in log if entry != "in:wrapper" and entry != "out:wrapper"]


async def test_checkpoints_in_one_loop_do_what_nested_ones_do(registry: ToolRegistry) -> None:
    flat_log: list[str] = []
    flat: list[Middleware[Any]] = [
        Middleware(Marker, label="a", log=flat_log),
        Middleware(Marker, label="b", log=flat_log),
    ]
    nested_log: list[str] = []
    nested: list[Middleware[Any]] = [
        Middleware(Marker, label="a", log=nested_log),
        Middleware(Wrapper, log=nested_log),
        Middleware(Marker, label="b", log=nested_log),
    ]
    flat_result, flat_seen = await run(registry, flat, flat_log)
    nested_result, nested_seen = await run(registry, nested, nested_log)
    # Each exit gets the call as its stage received it, innermost first, the same either way.
    assert flat_seen == nested_seen == ["in:a:caller", "in:b:a", "out:b:a:hi", "out:a:caller:hi"]
    assert flat_result.text_content() == nested_result.text_content() == "hi"
    assert "in:wrapper" in nested_log


async def test_a_checkpoint_that_answers_stops_the_call_and_only_the_stages_outside_see_it(
    registry: ToolRegistry,
) -> None:
    log: list[str] = []
    middleware: list[Middleware[Any]] = [
        Middleware(Marker, label="outer", log=log),
        Middleware(Marker, label="guard", log=log, refuse_all=True),
        Middleware(Marker, label="inner", log=log),
    ]
    result, seen = await run(registry, middleware, log)
    assert seen == ["in:outer:caller", "in:guard:outer", "out:outer:caller:guard refused"]
    refusal = refusal_of(result)
    assert result.is_error and refusal is not None and refusal["stage"] == "guard"


async def test_a_registry_refusal_reaches_the_checkpoints_as_an_audited_result(registry: ToolRegistry) -> None:
    log: list[str] = []
    result = await Pipeline.for_registry(registry, [Middleware(Marker, label="a", log=log)]).handle(
        CallRecord("nothing_here")
    )
    refusal = refusal_of(result)
    assert refusal == {"stage": "registry", "audited": True}
    assert log[-1].startswith("out:a:None:Unknown tool")
