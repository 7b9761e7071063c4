"""Start records: where a process may die mid-call, each call is audited before its tool runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from local_tools import RecordingTool
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from toolsift.pipeline import trace_tool_calls
from toolsift.registry import AuditLog, ToolContext, ToolRegistry, ToolResult
from toolsift.registry._internal import AuditEvent


class SeesItsStart(RecordingTool):
    """Records, as it runs, the kinds of the audit lines already in ``path``."""

    def __init__(self, path: Path) -> None:
        super().__init__("write_note")
        self.path = path
        self.seen: list[list[str]] = []

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.seen.append([json.loads(line)["kind"] for line in self.path.read_text(encoding="utf-8").splitlines()])
        return await super().call(args, ctx)


def _kinds(path: Path) -> list[tuple[str, str]]:
    return [(record["kind"], record["call_id"]) for record in map(json.loads, path.read_text().splitlines())]


async def test_a_log_that_records_starts_has_the_start_before_the_tool_runs(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    flushed: list[str] = []
    registry = ToolRegistry(audit=AuditLog(path, record_starts=True))
    registry.audit.subscribe(
        lambda event: flushed.append(f"queued {event.kind}"), flush=lambda: _note(flushed, "flushed")
    )
    registry.register(note := SeesItsStart(path))
    result = await registry.execute("write_note", {"text": "hi"})
    assert not result.is_error
    assert note.seen == [["tool.started"]]  # in the file, and flushed, before the tool ran
    assert flushed == ["queued tool.started", "flushed", "queued tool.executed"]
    (started, start_id), (ended, end_id) = _kinds(path)
    assert (started, ended, start_id) == ("tool.started", "tool.executed", end_id)
    start = json.loads(path.read_text().splitlines()[0])
    assert (start["outcome"], start["tool"], start["arguments"]) == ("started", "write_note", {"text": "hi"})


async def _note(notes: list[str], text: str) -> None:
    notes.append(text)


async def test_a_call_whose_start_cannot_be_recorded_does_not_run(tmp_path: Path) -> None:
    async def unreachable() -> None:
        raise TimeoutError("audit records did not reach Redis within 10s")

    path = tmp_path / "audit.jsonl"
    registry = ToolRegistry(audit=AuditLog(path, record_starts=True))
    unsubscribe = registry.audit.subscribe(lambda event: None, flush=unreachable)
    registry.register(note := RecordingTool("write_note"))
    result = await registry.execute("write_note", {})
    assert result.is_error and result.text_content() == (
        "Tool 'write_note' was not run: its start could not be audited: audit records did not reach Redis within 10s"
    )
    assert note.calls == []
    assert [kind for kind, _ in _kinds(path)] == ["tool.started", "tool.failed"]
    unsubscribe()  # takes the flush away too
    assert not (await registry.execute("write_note", {})).is_error and len(note.calls) == 1


async def test_starts_are_not_recorded_unless_asked() -> None:
    events: list[AuditEvent] = []
    registry = ToolRegistry()
    registry.audit.subscribe(events.append)
    registry.register(RecordingTool("write_note"))
    await registry.execute("write_note", {})
    assert [event.kind for event in events] == ["tool.executed"]


@pytest.mark.parametrize("record_starts", [False, True])
async def test_a_call_is_one_span_whether_or_not_its_start_is_recorded(record_starts: bool) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    registry = ToolRegistry(audit=AuditLog(record_starts=record_starts))
    stop = trace_tool_calls(registry.audit, provider)
    registry.register(RecordingTool("write_note"))
    await registry.execute("write_note", {})
    stop()
    assert [(span.name, (span.attributes or {})["toolsift.outcome"]) for span in exporter.get_finished_spans()] == [
        ("execute_tool write_note", "ok")
    ]
