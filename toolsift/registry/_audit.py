"""Audit events for every call, allowed or denied, with secrets kept out."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from .._files import OwnFile, UnsafeFile

__all__ = ["AuditEvent", "AuditKind", "AuditLog"]

logger = logging.getLogger("toolsift.audit")
AuditKind = Literal["tool.started", "tool.executed", "tool.failed", "tool.denied", "model.round"]
AuditSubscriber = Callable[["AuditEvent"], None]
AuditFlush = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class AuditEvent:
    """One call's record.

    Attributes:
        kind: ``tool.executed`` (ran, result ok), ``tool.failed`` (ran and failed,
            or arguments invalid), ``tool.denied`` (refused by a layer);
            ``tool.started`` (about to run: written before the tool runs when
            the log records starts, so a call whose end was never recorded,
            its process killed, still has a record); ``model.round`` (one request
            of an agent loop to its model: ``tool`` holds the model's name,
            ``tokens`` what the provider counted, so the prompt-cache hit rate shows).
        tool: The name the caller used, resolved to the canonical name when known.
        server: The tool's MCP server, if any.
        skill: The active skill of the scope.
        agent: The agent profile of the scope.
        layer: The refusing layer for denials.
        reason: Why it was denied or failed.
        duration_ms: Time spent in the registry and the tool (for a start: before the tool).
        outcome: ``ok``, ``error``, ``denied``, or ``started`` for a start.
        call_id: Unique per call.
        arguments: The arguments with secret-looking values redacted (``toolsift._redaction.redact``).
        flags: Markers raised while handling the call (``suspicious_content``).
        tokens: For ``model.round``: ``input`` (all input tokens, cached ones included),
            ``cache_read``, ``cache_write`` and ``output``.
        timestamp: ISO-8601 UTC time of the event.
    """

    kind: AuditKind
    tool: str
    outcome: Literal["ok", "error", "denied", "started"]
    call_id: str
    duration_ms: float
    server: str | None = None
    skill: str | None = None
    agent: str | None = None
    layer: int | None = None
    reason: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    flags: tuple[str, ...] = ()
    tokens: Mapping[str, int] = field(default_factory=dict)
    timestamp: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="milliseconds"))

    def to_json(self) -> str:
        """The event as one JSON line."""
        data = asdict(self)
        data["flags"] = list(self.flags)
        return json.dumps(data, ensure_ascii=False, default=str)


class AuditLog:
    """Delivers audit events to subscribers and, when a path is set, to a JSON-lines file.

    A subscriber that raises is logged and skipped, so one bad listener cannot
    break the calls it observes. The file is created (0600) when the log is
    made, before any call runs, so that a sandboxed program finds it there
    and cannot plant a link in its place; it is never written through a link
    or a second name (``toolsift._files.OwnFile``). A record that cannot be
    written is counted and the failure logged as an error once, naming the
    file; the calls and the subscribers go on.

    Args:
        path: The JSON-lines file; None: subscribers only.
        record_starts: Record each call that is about to run (``tool.started``),
            and have it wait until every subscriber's copy is delivered (see
            :meth:`flush`): where a process may die mid-call and leave its
            caller unsure whether the call ran (replicas sharing sessions).
    """

    def __init__(self, path: str | Path | None = None, *, record_starts: bool = False) -> None:
        self.path = Path(path) if path is not None else None
        self.record_starts = record_starts
        self._subscribers: list[AuditSubscriber] = []
        self._flushes: list[AuditFlush] = []
        self._lock = threading.Lock()
        self._file = OwnFile(path, what="audit log") if path is not None else None
        self._failure: str | None = None  # why records are not written, while they are not
        self._lost = 0
        if self._file is not None:
            self._write(self._file, None)

    def subscribe(self, subscriber: AuditSubscriber, *, flush: AuditFlush | None = None) -> Callable[[], None]:
        """Call ``subscriber`` with every event; returns a function that unsubscribes.

        Args:
            subscriber: Called with each event, synchronously.
            flush: For a subscriber that delivers events later (a queue, a
                network): waits until the events it was given so far are
                delivered, raising ``TimeoutError`` when they cannot be.
        """
        self._subscribers.append(subscriber)
        if flush is not None:
            self._flushes.append(flush)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)
            if flush in self._flushes:
                self._flushes.remove(flush)

        return unsubscribe

    async def flush(self) -> None:
        """Wait until every subscriber that delivers later holds the events emitted so far.

        Raises:
            TimeoutError: When a subscriber cannot deliver them (its message says why).
        """
        for flush in list(self._flushes):
            await flush()

    @property
    def observed(self) -> bool:
        """Whether an event would reach anyone (a subscriber or the file): when not, callers skip making it."""
        return bool(self._subscribers) or self.path is not None

    def emit(self, event: AuditEvent) -> None:
        """Deliver one event."""
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception:
                logger.exception("audit subscriber %r failed", subscriber)
        if self._file is not None:
            self._write(self._file, event.to_json() + "\n")

    def _write(self, file: OwnFile, line: str | None) -> None:
        """Append ``line`` to ``file`` (None: create it); a failure is logged once, not raised."""
        with self._lock:
            try:
                if line is None:
                    file.create()
                else:
                    file.append(line)
            except OSError as exc:
                if line is not None:
                    self._lost += 1
                why = str(exc) if isinstance(exc, UnsafeFile) else f"audit log {file.path}: {exc.strerror or exc}"
                if why != self._failure:
                    self._failure = why
                    logger.error("audit records are not written: %s", why)
                return
            if self._failure is not None:
                logger.warning("the audit log %s is written again; %d records were lost", file.path, self._lost)
                self._failure, self._lost = None, 0
