"""execute(): argument validation, failures as results, timeouts, cancellation and audit."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from local_tools import BrokenTool, RecordingTool, SlowTool

from toolsift import InvalidArguments, PermissionDenied, ServerDraining, ToolNotFound
from toolsift._redaction import redact
from toolsift.registry import AuditLog, CallRecord, ToolContext, ToolRegistry, ToolResult, TurnScope
from toolsift.registry._internal import AuditEvent

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "count": {"type": "integer", "minimum": 1}},
    "required": ["path"],
    "additionalProperties": False,
}


@pytest.fixture
def events() -> list[AuditEvent]:
    return []


@pytest.fixture
def registry(events: list[AuditEvent]) -> ToolRegistry:
    registry = ToolRegistry()
    registry.audit.subscribe(events.append)
    registry.register(RecordingTool("read_file", schema=SCHEMA, read_only=True))
    return registry


async def test_arguments_are_validated_before_the_tool_runs(registry: ToolRegistry, events: list[AuditEvent]) -> None:
    with pytest.raises(InvalidArguments, match=r"'read_file'.*\(root\): 'path' is a required property") as info:
        await registry.execute("read_file", {"count": 2})
    assert info.value.tool == "read_file"
    with pytest.raises(InvalidArguments, match="count: 0 is less than the minimum of 1"):
        await registry.execute("read_file", {"path": "a", "count": 0})
    with pytest.raises(InvalidArguments, match="Additional properties are not allowed"):
        await registry.execute("read_file", {"path": "a", "mode": "x"})
    assert registry.get("read_file").calls == []  # type: ignore[attr-defined]
    assert [e.kind for e in events] == ["tool.failed"] * 3


@pytest.mark.parametrize(
    "arguments",
    [
        {"path": "\ud800"},  # a lone surrogate: valid JSON, not UTF-8
        {"path": "a", "\udfff": 1},  # ... in a key
        json.loads('{"path": "a", "deep": ' + "[" * 600 + "]" * 600 + "}"),  # json.loads accepts 600 levels
    ],
)
async def test_unsendable_arguments_are_refused_before_the_tool_runs(
    registry: ToolRegistry, events: list[AuditEvent], arguments: dict[str, object]
) -> None:
    with pytest.raises(InvalidArguments, match="lone surrogate|nested more than 64 levels deep"):
        await registry.execute("read_file", arguments)
    assert registry.get("read_file").calls == []  # type: ignore[attr-defined]
    assert [e.kind for e in events] == ["tool.failed"]  # audited, without overflowing the redaction


async def test_audit_redaction_cuts_absurd_nesting() -> None:
    deep: object = "leaf"
    for _ in range(5000):
        deep = [deep]
    assert "nested deeper than 100" in json.dumps(redact({"deep": deep}))


async def test_non_object_arguments_are_refused(registry: ToolRegistry) -> None:
    with pytest.raises(InvalidArguments, match="arguments must be a JSON object, got list"):
        await registry.execute("read_file", ["a"])  # type: ignore[arg-type]


async def test_none_arguments_mean_an_empty_object() -> None:
    registry = ToolRegistry()
    tool = RecordingTool("ping")
    registry.register(tool)
    assert not (await registry.execute("ping")).is_error
    assert tool.calls == [{}]


async def test_a_broken_input_schema_is_a_tool_error_not_a_crash() -> None:
    registry = ToolRegistry()
    registry.register(RecordingTool("odd", schema={"type": "object", "properties": {"a": {"type": 12}}}))
    result = await registry.execute("odd", {})
    assert result.is_error and "'odd' has an invalid inputSchema" in result.text_content()
    assert (await registry.execute("odd", {})).is_error


async def test_a_tool_that_raises_returns_an_error_result() -> None:
    registry = ToolRegistry()
    registry.register(BrokenTool("buggy"))
    result = await registry.execute("buggy", {})
    assert result.is_error
    assert result.text_content() == "Tool 'buggy' failed: RuntimeError: disk on fire"


async def test_a_session_error_propagates_to_the_caller(events: list[AuditEvent]) -> None:
    class Draining(RecordingTool):
        async def call(self, args: dict[str, object], ctx: ToolContext) -> ToolResult:
            raise ServerDraining("git", "12:00:00")

    registry = ToolRegistry()
    registry.audit.subscribe(events.append)
    registry.register(Draining("git__status"))
    with pytest.raises(ServerDraining, match="'git' is draining"):
        await registry.execute("git__status", {})
    assert events[-1].kind == "tool.failed" and "draining" in (events[-1].reason or "")


async def test_timeout_cancels_the_tool_and_returns_an_error() -> None:
    registry = ToolRegistry()
    slow = SlowTool("slow", seconds=30)
    registry.register(slow)
    result = await registry.execute("slow", {}, timeout=0.05)
    assert result.is_error and result.text_content() == "Tool 'slow' timed out after 0.05s"
    assert slow.cancelled


async def test_caller_cancellation_reaches_the_tool() -> None:
    registry = ToolRegistry()
    slow = SlowTool("slow", seconds=30)
    registry.register(slow)
    with anyio.move_on_after(0.05):
        await registry.execute("slow", {})
    assert slow.cancelled


async def test_progress_and_context_reach_the_tool() -> None:
    seen: list[ToolContext] = []

    class Reporter(RecordingTool):
        async def call(self, args: dict[str, object], ctx: ToolContext) -> ToolResult:
            seen.append(ctx)
            assert ctx.progress is not None
            await ctx.progress(1, 2, "half")
            return ToolResult.text("ok")

    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    registry = ToolRegistry()
    registry.register(Reporter("report"))
    scope = TurnScope(skill="s")
    await registry.execute("report", {}, scope, timeout=5, progress=on_progress)
    assert updates == [(1, 2, "half")]
    assert seen[0].scope is scope and seen[0].timeout == 5 and len(seen[0].call_id) == 16


async def test_every_call_is_audited_with_layer_and_outcome(registry: ToolRegistry, events: list[AuditEvent]) -> None:
    await registry.execute("read_file", {"path": "a"}, TurnScope(skill="s", agent="a"))
    with pytest.raises(ToolNotFound):
        await registry.execute("missing", {})
    with pytest.raises(PermissionDenied):
        await registry.execute("read_file", {"path": "a"}, TurnScope(skill_allowed=["x"]))
    executed, unknown, denied = events
    assert (executed.kind, executed.outcome, executed.skill, executed.agent) == ("tool.executed", "ok", "s", "a")
    assert executed.duration_ms >= 0 and executed.arguments == {"path": "a"}
    assert (unknown.kind, unknown.layer, unknown.tool) == ("tool.denied", 2, "missing")
    assert (denied.kind, denied.layer, denied.outcome) == ("tool.denied", 4, "denied")


async def test_failed_results_are_audited_as_failures(events: list[AuditEvent]) -> None:
    registry = ToolRegistry()
    registry.audit.subscribe(events.append)
    registry.register(BrokenTool("buggy"))
    await registry.execute("buggy", {})
    assert events[0].kind == "tool.failed" and "disk on fire" in (events[0].reason or "")


async def test_audit_never_records_secret_looking_values(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    registry = ToolRegistry(audit=AuditLog(path))
    registry.register(RecordingTool("login"))
    secrets = {
        "password": "hunter2",
        "api_key": "abc",
        "note": "Bearer abc.def.ghi",
        "other": "sk-" + "A" * 30,
        "blob": "f" * 40,
        "nested": {"token": "t0k"},
        "list": ["ghp_" + "x" * 30, "plain"],
        "long": "word " * 100,
    }
    await registry.execute("login", secrets)
    text = path.read_text()
    for needle in ("hunter2", "abc", "t0k", "AAAA", "ffff", "ghp_"):
        assert needle not in text
    record = json.loads(text)
    assert record["arguments"]["list"][1] == "plain"
    assert record["arguments"]["long"].endswith("[500 chars]")
    assert record["kind"] == "tool.executed" and record["flags"] == []


async def test_audit_subscriber_errors_are_logged_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()

    def broken(event: AuditEvent) -> None:
        raise ValueError("boom")

    unsubscribe = registry.audit.subscribe(broken)
    registry.register(RecordingTool("a"))
    assert not (await registry.execute("a", {})).is_error
    assert "audit subscriber" in caplog.text
    unsubscribe()
    unsubscribe()


async def test_result_flags_reach_the_audit_event(events: list[AuditEvent]) -> None:
    class Flagging(RecordingTool):
        async def call(self, args: dict[str, object], ctx: ToolContext) -> ToolResult:
            return ToolResult(meta={"flags": ["suspicious_content"]})

    registry = ToolRegistry()
    registry.audit.subscribe(events.append)
    registry.register(Flagging("f"))
    await registry.execute("f", {})
    assert events[0].flags == ("suspicious_content",)


async def test_handle_runs_a_call_record_as_execute_runs_its_arguments(
    registry: ToolRegistry, events: list[AuditEvent]
) -> None:
    seen: list[ToolContext] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        """Handed to the tool only."""

    tool = RecordingTool("general__echo", read_only=True)
    registry.replace_server("general", [tool], internal=False)
    original = tool.call

    async def call(args: dict[str, object], ctx: ToolContext) -> ToolResult:
        seen.append(ctx)
        return await original(args, ctx)

    tool.call = call  # type: ignore[method-assign]
    scope = TurnScope(agent="ci", skill="review")
    result = await registry.handle(CallRecord("general__echo", {"text": "hi"}, scope, timeout=5, progress=progress))
    assert not result.is_error and tool.calls == [{"text": "hi"}]
    assert (seen[0].scope, seen[0].timeout, seen[0].progress) == (scope, 5, progress)
    assert (events[-1].kind, events[-1].agent, events[-1].skill, events[-1].call_id) == (
        "tool.executed",
        "ci",
        "review",
        seen[0].call_id,
    )
    with pytest.raises(ToolNotFound, match="Unknown tool 'nope'"):
        await registry.handle(CallRecord("nope"))
    assert (events[-1].kind, events[-1].tool, events[-1].layer) == ("tool.denied", "nope", 2)


def test_an_audit_log_is_observed_once_someone_listens(tmp_path: Path) -> None:
    log = AuditLog()
    assert not log.observed  # calls then make no audit records at all
    unsubscribe = log.subscribe(lambda event: None)
    assert log.observed
    unsubscribe()
    assert not log.observed
    assert AuditLog(tmp_path / "audit.jsonl").observed


async def test_calls_no_one_audits_make_no_audit_record(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[object] = []
    monkeypatch.setattr("toolsift.registry._execute.AuditEvent", lambda **fields: made.append(fields))
    registry = ToolRegistry()
    registry.register(RecordingTool("read_file", read_only=True))
    await registry.execute("read_file", {})
    assert made == []
    registry.audit.subscribe(lambda event: None)
    await registry.execute("read_file", {})
    assert len(made) == 1
