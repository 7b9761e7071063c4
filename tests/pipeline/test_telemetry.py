"""OpenTelemetry spans for tool calls: one per audited call, in the caller's trace, without arguments.

Spans go to a local SDK provider passed to ``trace_tool_calls``. Only the config
switch needs the global provider (``audit.openTelemetry`` traces to it, as an
application's setup would); OpenTelemetry lets a process set it once, so the
``global_provider`` fixture sets it to the same local provider on first use
rather than at import, which would reach every test collected in the worker.
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from local_tools import RecordingTool
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from toolsift import ConfigError, PermissionDenied, ToolNotFound
from toolsift.config import parse_config
from toolsift.pipeline import trace_tool_calls
from toolsift.pipeline._internal import trace_configured_calls
from toolsift.registry import AuditLog, Permissions, ToolRegistry, ToolResult, TurnScope, tool
from toolsift.registry._internal import AuditEvent
from toolsift.toolbox import Toolbox

SECRET = "hunter2-not-in-spans"
EXPORTER = InMemorySpanExporter()
PROVIDER = TracerProvider()
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))
PACKAGE = Path(__file__).resolve().parents[2] / "toolsift"


@pytest.fixture(autouse=True)
def spans() -> Iterator[InMemorySpanExporter]:
    EXPORTER.clear()
    yield EXPORTER
    EXPORTER.clear()


@tool
def fails() -> ToolResult:
    """Always fails."""
    return ToolResult.error("disk full")


@pytest.fixture
def registry() -> Iterator[ToolRegistry]:
    registry = ToolRegistry()
    registry.replace_server(
        "github",
        [RecordingTool("github__get_repo", read_only=True), RecordingTool("github__delete_repo")],
        internal=False,
    )
    registry.register(fails)
    stop = trace_tool_calls(registry.audit, PROVIDER)
    yield registry
    stop()


@pytest.fixture
def global_provider() -> TracerProvider:
    """The local provider, made global once per process (a second set would be refused with a warning)."""
    if trace.get_tracer_provider() is not PROVIDER:
        trace.set_tracer_provider(PROVIDER)
    return PROVIDER


def only(exporter: InMemorySpanExporter) -> ReadableSpan:
    [span] = exporter.get_finished_spans()
    return span


async def test_an_executed_call_is_one_span_with_genai_attributes(
    registry: ToolRegistry, spans: InMemorySpanExporter
) -> None:
    await registry.execute("github__get_repo", {"text": SECRET}, TurnScope(skill="ops", agent="main"))
    span = only(spans)
    assert span.name == "execute_tool github__get_repo"
    assert span.kind == trace.SpanKind.INTERNAL
    attributes = dict(span.attributes or {})
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == "github__get_repo"
    assert isinstance(attributes["gen_ai.tool.call.id"], str)
    assert (attributes["toolsift.server"], attributes["toolsift.outcome"]) == ("github", "ok")
    assert (attributes["toolsift.skill"], attributes["toolsift.agent"]) == ("ops", "main")
    assert span.status.status_code == trace.StatusCode.UNSET
    assert span.end_time is not None and span.start_time is not None and span.end_time >= span.start_time
    assert SECRET not in json.dumps(attributes)


async def test_a_failed_call_is_an_error_span(registry: ToolRegistry, spans: InMemorySpanExporter) -> None:
    await registry.execute("fails")
    span = only(spans)
    attributes = dict(span.attributes or {})
    assert (attributes["toolsift.outcome"], attributes["error.type"]) == ("error", "tool_error")
    assert "toolsift.server" not in attributes
    assert span.status.status_code == trace.StatusCode.ERROR and "disk full" in (span.status.description or "")


async def test_a_refusal_names_its_layer_and_reason(registry: ToolRegistry, spans: InMemorySpanExporter) -> None:
    with pytest.raises(PermissionDenied):
        await registry.execute("github__delete_repo", {}, permissions=Permissions(denylist=("*delete*",)))
    with pytest.raises(ToolNotFound):
        await registry.execute("github__nope", {})
    denied, unknown = spans.get_finished_spans()
    for span, layer in ((denied, 5), (unknown, 2)):
        attributes = dict(span.attributes or {})
        assert (attributes["toolsift.outcome"], attributes["error.type"]) == ("denied", "permission_denied")
        assert attributes["toolsift.refusal.layer"] == layer
        assert span.status.status_code == trace.StatusCode.ERROR
    assert "denylist" in str(dict(denied.attributes or {})["toolsift.refusal.reason"])


async def test_the_callers_open_span_is_the_parent(registry: ToolRegistry, spans: InMemorySpanExporter) -> None:
    with PROVIDER.get_tracer("agent").start_as_current_span("agent step") as step:
        await registry.execute("github__get_repo", {})
    call = next(s for s in spans.get_finished_spans() if s.name.startswith("execute_tool"))
    assert call.parent is not None and call.parent.span_id == step.get_span_context().span_id
    assert call.context is not None and call.context.trace_id == step.get_span_context().trace_id


async def test_stopping_ends_the_spans(spans: InMemorySpanExporter) -> None:
    registry = ToolRegistry()
    registry.register(fails)
    stop = trace_tool_calls(registry.audit, PROVIDER)
    stop()
    await registry.execute("fails")
    assert spans.get_finished_spans() == ()


def test_without_opentelemetry_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    with pytest.raises(
        ImportError,
        match=r"pip install 'opentelemetry-api>=1.20' \(from a clone of toolsift: pip install -e '\.\[otel\]'\)",
    ):
        trace_tool_calls(AuditLog())
    config = parse_config('{"audit": {"openTelemetry": true}}', path=Path("toolsift.json"))
    with pytest.raises(
        ConfigError, match=r"audit\.openTelemetry.*pip install 'opentelemetry-api>=1.20'.*-e '\.\[otel\]'"
    ):
        trace_configured_calls(AuditLog(), config)
    assert trace_configured_calls(AuditLog(), parse_config("{}"))() is None  # off: nothing to import


def test_toolsift_imports_opentelemetry_only_when_tracing_starts() -> None:
    # The mcp SDK may import it on its own; toolsift's modules import it inside trace_tool_calls or for types only.
    eager = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        guarded = {
            id(node)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
            for node in ast.walk(block)
        }
        # Run at import: the module's own statements and what its top-level try/if blocks hold.
        eager_nodes = [n for top in tree.body for n in (ast.walk(top) if isinstance(top, ast.Try | ast.If) else [top])]
        for node in eager_nodes:
            if not isinstance(node, ast.Import | ast.ImportFrom) or id(node) in guarded:
                continue
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(name.split(".")[0] == "opentelemetry" for name in names):
                eager.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert eager == []


async def test_the_config_switch_traces_a_toolbox_while_it_runs(
    tmp_path: Path, spans: InMemorySpanExporter, global_provider: TracerProvider
) -> None:
    path = tmp_path / "toolsift.json"
    path.write_text(json.dumps({"audit": {"openTelemetry": True}, "skills": {"paths": [], "userSkills": False}}))
    async with Toolbox.from_config(path) as box:
        box.registry.register(fails)
        await box.registry.execute("fails")
    await box.registry.execute("fails")  # after the toolbox closed: no longer traced
    assert [s.name for s in spans.get_finished_spans()] == ["execute_tool fails"]


def test_model_rounds_in_the_audit_make_no_tool_span(registry: ToolRegistry, spans: InMemorySpanExporter) -> None:
    registry.audit.emit(
        AuditEvent(kind="model.round", tool="claude-test", outcome="ok", call_id="r", duration_ms=1.0, tokens={})
    )
    assert spans.get_finished_spans() == ()
