"""OpenTelemetry spans for tool calls, made from the audit events every call already emits.

The registry audits each call exactly once, allowed, failed or refused, with
its duration, server, skill, agent and, for refusals, the layer and reason.
A span per event is therefore complete without touching the call path, and
the audit subscriber runs in the caller's context, so the span's parent is
whatever span the caller has open (an agent framework's step, a request).
Arguments never go into spans: they may hold secrets, and exporters ship
spans off the machine.

OpenTelemetry is an optional dependency (the ``otel`` extra, see :data:`OTEL_EXTRA_HINT`);
importing this module does not import it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from importlib.metadata import version
from typing import TYPE_CHECKING

from .._exceptions import ConfigError
from .._install import install_advice
from ..config import ToolsiftConfig
from ..registry import AuditLog
from ..registry._internal import AuditEvent

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

__all__ = ["OTEL_EXTRA_HINT", "trace_configured_calls", "trace_tool_calls"]

OTEL_EXTRA_HINT = install_advice("otel")
# error.type for calls that did not succeed (OpenTelemetry's semantic conventions ask for one on error).
_ERROR_TYPES = {"error": "tool_error", "denied": "permission_denied"}


def trace_tool_calls(audit: AuditLog, tracer_provider: TracerProvider | None = None) -> Callable[[], None]:
    """Emit one span per tool call audited by ``audit``; returns a function that stops it.

    Spans follow OpenTelemetry's GenAI conventions (``execute_tool {name}``,
    ``gen_ai.operation.name``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``)
    plus ``toolsift.server``, ``toolsift.outcome`` (``ok``, ``error``, ``denied``),
    ``toolsift.skill``, ``toolsift.agent`` and, for refusals,
    ``toolsift.refusal.layer`` and ``toolsift.refusal.reason``. Calls that did
    not succeed get status ERROR with the reason.

    Args:
        audit: The registry's audit log.
        tracer_provider: Where spans go; the global provider by default.

    Raises:
        ImportError: When ``opentelemetry-api`` is not installed (the message names the extra).
    """
    try:
        from opentelemetry import trace
    except ImportError as exc:
        raise ImportError(f"tracing tool calls needs OpenTelemetry: {OTEL_EXTRA_HINT}") from exc
    tracer = trace.get_tracer("toolsift", version("toolsift"), tracer_provider=tracer_provider)

    def record(event: AuditEvent) -> None:
        if not event.kind.startswith("tool.") or event.kind == "tool.started":  # spans come from calls' end records
            return
        end = time.time_ns()
        attributes: dict[str, str | int] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.tool,
            "gen_ai.tool.call.id": event.call_id,
            "toolsift.outcome": event.outcome,
        }
        optional = {"toolsift.server": event.server, "toolsift.skill": event.skill, "toolsift.agent": event.agent}
        attributes.update({key: value for key, value in optional.items() if value is not None})
        if event.outcome == "denied":
            attributes["toolsift.refusal.layer"] = event.layer if event.layer is not None else 0
            attributes["toolsift.refusal.reason"] = event.reason or ""
        if event.outcome in _ERROR_TYPES:
            attributes["error.type"] = _ERROR_TYPES[event.outcome]
        span = tracer.start_span(
            f"execute_tool {event.tool}",
            kind=trace.SpanKind.INTERNAL,
            start_time=end - int(event.duration_ms * 1_000_000),
            attributes=attributes,
        )
        if event.outcome != "ok":
            span.set_status(trace.Status(trace.StatusCode.ERROR, event.reason or event.outcome))
        span.end(end_time=end)

    return audit.subscribe(record)


def trace_configured_calls(audit: AuditLog, config: ToolsiftConfig) -> Callable[[], None]:
    """Trace to the global provider when the config's ``audit.openTelemetry`` is on; returns the stopper.

    Raises:
        ConfigError: When it is on and OpenTelemetry is not installed.
    """
    if not config.audit.open_telemetry:
        return lambda: None
    try:
        return trace_tool_calls(audit)
    except ImportError as exc:
        raise ConfigError(
            f"OpenTelemetry is not installed: {OTEL_EXTRA_HINT}, or turn this off",
            path=config.path,
            field="audit.openTelemetry",
        ) from exc
