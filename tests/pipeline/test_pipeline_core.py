"""The pipeline itself: building stages, the registry handler, and what a pipeline never lets escape."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from toolsift import InvalidArguments, ServerUnavailable
from toolsift.pipeline import Middleware, Pipeline, ResultGuard
from toolsift.pipeline._call import REFUSAL_KEY, refusal_of
from toolsift.pipeline._internal import refuse
from toolsift.registry import CallHandler, CallRecord, Level, Permissions, ToolRegistry, ToolResult, TurnScope, tool


@tool(read_only=True)
def echo(text: str) -> str:
    """Say it back."""
    return text


@tool(required_level="admin")
def wipe() -> str:
    """Only admins."""
    return "wiped"


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_many([echo, wipe])
    return registry


class Recorder:
    """A stage that records the calls it sees and the order stages run in."""

    def __init__(self, handler: CallHandler, *, label: str, log: list[str]) -> None:
        self._handler = handler
        self._label = label
        self._log = log

    async def __call__(self, call: CallRecord) -> ToolResult:
        self._log.append(f"in:{self._label}")
        result = await self._handler(call)
        self._log.append(f"out:{self._label}")
        return result


async def test_pipeline_wraps_stages_outermost_first(registry: ToolRegistry) -> None:
    log: list[str] = []
    pipeline = Pipeline.for_registry(
        registry,
        [
            Middleware(Recorder, label="a", log=log),
            Middleware(Recorder, label="b", log=log),
        ],
    )
    result = await pipeline("echo", {"text": "hi"})
    assert result.text_content() == "hi"
    assert log == ["in:a", "in:b", "out:b", "out:a"]
    assert repr(pipeline.middleware[0]).startswith("Middleware(Recorder, label='a'")
    assert repr(pipeline).startswith("Pipeline([Middleware(Recorder")


async def test_pipeline_is_an_execute_compatible_call_handler(registry: ToolRegistry) -> None:
    pipeline = Pipeline.for_registry(registry)
    result = await pipeline("echo", {"text": "x"}, TurnScope(), Permissions(), timeout=5)
    assert result.text_content() == "x"


@pytest.mark.parametrize(
    ("name", "arguments", "permissions", "message"),
    [
        ("nope", {}, None, "Unknown tool 'nope'"),
        ("echo", {"text": 5}, None, "Invalid arguments for tool 'echo': text: 5 is not of type 'string'"),
        ("wipe", {}, Permissions(level=Level.WRITE), "denied at layer 5 (permission checks)"),
    ],
)
async def test_registry_refusals_become_audited_error_results(
    registry: ToolRegistry, name: str, arguments: dict[str, Any], permissions: Permissions | None, message: str
) -> None:
    result = await Pipeline.for_registry(registry)(name, arguments, permissions=permissions)
    assert result.is_error
    assert message in result.text_content()
    assert refusal_of(result) == {"stage": "registry", "audited": True}


async def test_pipeline_turns_stage_bugs_into_error_results(
    registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(handler: CallHandler) -> CallHandler:
        async def stage(call: CallRecord) -> ToolResult:
            raise ZeroDivisionError("oops")

        return stage

    result = await Pipeline.for_registry(registry, [Middleware(broken)])("echo", {"text": "x"})
    assert result.is_error
    assert result.text_content() == (
        "Tool 'echo' could not be run: internal error (ZeroDivisionError); the server log has the details"
    )
    assert "The tool pipeline failed on a call of 'echo'" in caplog.text


async def test_pipeline_turns_toolsift_errors_of_any_handler_into_results() -> None:
    async def handler(call: CallRecord) -> ToolResult:
        raise ServerUnavailable("git", "restarting")

    result = await Pipeline(handler)("git__log")
    assert result.text_content() == "MCP server 'git' is restarting"
    assert refusal_of(result) == {"stage": "pipeline", "audited": False}


async def test_pipeline_lets_cancellation_through(registry: ToolRegistry) -> None:
    started = anyio.Event()

    async def hang(call: CallRecord) -> ToolResult:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async with anyio.create_task_group() as group:
        group.start_soon(Pipeline(hang), "x")
        await started.wait()
        group.cancel_scope.cancel()


def test_refuse_marks_results_and_tool_results_are_unmarked() -> None:
    refused = refuse("SecurityGuard", "no")
    assert refused.meta[REFUSAL_KEY] == {"stage": "SecurityGuard", "audited": False}
    assert refusal_of(ToolResult.text("ok")) is None


def test_middleware_options_are_checked_when_the_pipeline_is_built() -> None:
    async def handler(call: CallRecord) -> ToolResult:
        return ToolResult.text("")

    with pytest.raises(ValueError, match="max_bytes must be positive"):
        Pipeline(handler, [Middleware(ResultGuard, max_bytes=0)])


async def test_invalid_arguments_is_still_the_registry_type(registry: ToolRegistry) -> None:
    # The registry keeps raising for direct callers; only the pipeline converts.
    with pytest.raises(InvalidArguments, match="is not of type 'string'"):
        await registry.execute("echo", {"text": 1})
