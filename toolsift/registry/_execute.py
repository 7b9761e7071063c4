"""Running one call: the name routed once, the five layers, argument validation, timeout, audit.

The order, for every call whoever makes it (see ``toolsift.pipeline`` for the stages around it):
route the name to its entry (layer 2: unknown names stop here), the mask of layers 1-4 (what the
scope would not list), layer 5's permissions, argument validation against the inputSchema, then
approval (the ask tier: an approver is shown only valid calls), the audited start (where the log
records starts), the tool itself (an MCP tool fences an untrusted server's text), then one audit
record of how it ended. What the record carries for the tool (the caller's discovery, its way of
forwarding an MCP call) reaches it in its ``ToolContext`` unread.
"""

from __future__ import annotations

import itertools
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from .._exceptions import InvalidArguments, PermissionDenied, ToolNotFound, ToolsiftError
from .._redaction import redact
from ._approval import ApprovalRequest
from ._arguments import argument_problems
from ._audit import AuditEvent, AuditKind, AuditLog
from ._call import CallRecord
from ._permissions import PermissionLayer, approval_reason, check_permissions
from ._result import ToolResult
from ._tools import ToolContext
from ._visibility import Entry, hidden_reason
from .formats._strict import drop_optional_nulls

__all__ = ["Executor"]

_MAX_ERRORS = 5


_OUTCOMES: dict[AuditKind, str] = {
    "tool.started": "started",
    "tool.executed": "ok",
    "tool.failed": "error",
    "tool.denied": "denied",
}


@dataclass(slots=True)
class _Running:
    """What the executor knows of one call while it runs: what each of its audit records repeats."""

    call: CallRecord
    call_id: str
    started: float
    arguments: dict[str, Any]
    entry: Entry | None = None

    @property
    def tool(self) -> str:
        """The canonical name once routed; the name as asked before."""
        return self.entry.spec.name if self.entry is not None else self.call.name


class Executor:
    """The call path of a :class:`ToolRegistry`; one per registry.

    Args:
        lookup: The registry's name router (canonical name or alias to its entry).
        audit: Where every call's records go.
    """

    def __init__(self, lookup: Callable[[str], Entry], audit: AuditLog) -> None:
        self._lookup = lookup
        self._audit_log = audit
        self._layers: list[PermissionLayer] = []
        self._frozen = False
        # Call ids: unique per registry, cheap to make (a random prefix and a counter).
        self._id_prefix = secrets.token_hex(4)
        self._ids = itertools.count(1)

    def add_layer(self, layer: PermissionLayer) -> None:
        if self._frozen:
            raise RuntimeError("Cannot add a permission layer after the registry has started")
        self._layers.append(layer)

    def freeze(self) -> None:
        """Fix the layer stack: the first listing or call starts the registry."""
        self._frozen = True

    async def execute(self, call: CallRecord) -> ToolResult:
        """Run ``call`` in the order of this module's docs (``ToolRegistry.handle`` is this method).

        The tool runs in this very frame (no helper between it and the caller): the depth of a call is
        what a reader, a debugger and the profile pay for.
        """
        self._frozen = True
        args = call.arguments
        run = _Running(
            call,
            f"{self._id_prefix}{next(self._ids):08x}",
            time.perf_counter(),
            dict(args) if isinstance(args, Mapping) else {},
        )
        admitted = await self._admit(run)
        if isinstance(admitted, ToolResult):  # the approver's answer is not yet known: the call ends for now
            return admitted
        entry, approved, refusal = admitted
        name = entry.spec.name
        refusal = refusal if refusal is not None else await self._record_start(run)
        if refusal is not None:
            result = ToolResult.error(refusal)
        else:
            ctx = ToolContext(
                run.call_id, call.scope, call.permissions, call.timeout, call.progress, call.discovery, call.forward
            )
            try:
                if ctx.timeout is None:  # no cancel scope at all: it is the hot path of every MCP call
                    result = await entry.tool.call(run.arguments, ctx)
                else:
                    # Stays None only when the deadline cancelled the call (the tool saw the cancellation).
                    ended: ToolResult | None = None
                    with anyio.move_on_after(ctx.timeout):
                        ended = await entry.tool.call(run.arguments, ctx)
                    timed_out = f"Tool {name!r} timed out after {ctx.timeout:g}s"
                    result = ended if ended is not None else ToolResult.error(timed_out)
            except ToolsiftError as exc:
                self._audit(run, "tool.failed", reason=str(exc))
                raise
            except Exception as exc:
                result = ToolResult.error(f"Tool {name!r} failed: {type(exc).__name__}: {exc}")
        self._audit(
            run,
            "tool.failed" if result.is_error else "tool.executed",
            reason=result.text_content()[:200] if result.is_error else None,
            flags=(*result.meta.get("flags", ()), *(("approved",) if approved else ())),
        )
        return result

    async def _admit(self, run: _Running) -> tuple[Entry, bool, str | None] | ToolResult:
        """The entry, whether it was approved, and why it may not run after all (a broken schema), or None.

        Or the result an approver that cannot answer yet ends the call with, audited as refused.

        Raises:
            ToolNotFound: Unknown name (layer 2), audited.
            PermissionDenied: Refused by a layer, audited.
            InvalidArguments: The arguments fail the inputSchema, audited.
        """
        args = run.call.arguments
        try:
            entry = run.entry = self._lookup(run.call.name)
            self._check(entry, run)
            if args is not None and not isinstance(args, Mapping):
                raise InvalidArguments(entry.spec.name, [f"arguments must be a JSON object, got {type(args).__name__}"])
            problems, has_null = argument_problems(run.arguments)
            if problems:
                raise InvalidArguments(entry.spec.name, problems)
            if has_null:  # a strict-mode model sends null for every optional property it leaves out
                run.arguments = drop_optional_nulls(entry.spec.input_schema, run.arguments)
            schema_problem = self._validate(entry, run.arguments)
            approved = schema_problem is None and await _approve(entry, run)
        except ToolNotFound as exc:
            self._audit(run, "tool.denied", layer=2, reason=str(exc))
            raise
        except PermissionDenied as exc:
            self._audit(run, "tool.denied", layer=exc.layer, reason=exc.reason)
            raise
        except InvalidArguments as exc:
            self._audit(run, "tool.failed", reason=str(exc))
            raise
        if isinstance(approved, ToolResult):
            self._audit(run, "tool.denied", layer=5, reason=approved.text_content()[:200])
            return approved
        return entry, approved, schema_problem

    def _check(self, entry: Entry, run: _Running) -> None:
        """The mask (layers 1-4, what the scope would not list), then layer 5.

        Raises:
            PermissionDenied: Naming the layer that refused.
        """
        scope = run.call.scope
        denial = hidden_reason(entry, scope)
        # A tool hidden only for not being surfaced (layer 1) that layer 5 refuses anyway is refused for
        # the layer-5 reason: search_tools lists it with that reason, and the refusal must say the same.
        only_layer_1 = (
            denial is not None
            and denial[0] == 1
            and hidden_reason(entry, scope.with_unlocked([entry.spec.name])) is None
        )
        if denial is None or only_layer_1:
            reason = check_permissions(entry.spec, run.arguments, run.call.permissions, self._layers, names=entry.names)
            denial = (5, reason) if reason is not None else denial
        if denial is not None:
            raise PermissionDenied(entry.spec.name, denial[0], denial[1])

    async def _record_start(self, run: _Running) -> str | None:
        """Audit the start of a call about to run, where the log records starts; why it may not run, or None.

        The record is delivered before the tool runs, so a process killed during the call leaves a trace of
        a call whose effect may have happened; a call whose start cannot be recorded does not run.
        """
        if not self._audit_log.record_starts:
            return None
        self._audit(run, "tool.started")
        try:
            await self._audit_log.flush()
        except TimeoutError as exc:
            return f"Tool {run.tool!r} was not run: its start could not be audited: {exc}"
        return None

    @staticmethod
    def _validate(entry: Entry, arguments: dict[str, Any]) -> str | None:
        """Raise InvalidArguments for bad arguments; return a message when the schema itself is broken."""
        if entry.validator is None:
            schema = dict(entry.spec.input_schema)
            try:
                Draft202012Validator.check_schema(schema)
                entry.validator = Draft202012Validator(schema)
            except SchemaError as exc:
                entry.validator = f"Tool {entry.spec.name!r} has an invalid inputSchema: {exc.message}"
        if isinstance(entry.validator, str):
            return entry.validator
        if entry.validator.is_valid(arguments):
            return None
        errors = sorted(entry.validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
        messages = [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors[:_MAX_ERRORS]]
        raise InvalidArguments(entry.spec.name, messages)

    def _audit(
        self,
        run: _Running,
        kind: AuditKind,
        *,
        layer: int | None = None,
        reason: str | None = None,
        flags: tuple[str, ...] = (),
    ) -> None:
        """Emit one audit record of ``run``: its start, or how it ended (nothing to make when no one listens)."""
        if not self._audit_log.observed:
            return
        scope = run.call.scope
        self._audit_log.emit(
            AuditEvent(
                kind=kind,
                tool=run.tool,
                outcome=_OUTCOMES[kind],  # type: ignore[arg-type]
                call_id=run.call_id,
                duration_ms=round((time.perf_counter() - run.started) * 1000, 3),
                server=run.entry.spec.server if run.entry is not None else None,
                skill=scope.skill,
                agent=scope.agent,
                layer=layer,
                reason=reason,
                arguments=redact(run.arguments),
                flags=flags,
            )
        )


async def _approve(entry: Entry, run: _Running) -> bool | ToolResult:
    """Ask the caller's approver when the call asks; True when it was asked and approved.

    An approver that cannot answer yet gives the result the call ends with for now.

    Raises:
        PermissionDenied: Layer 5, when the call asks and there is no approver,
            the approver says no, or the approver fails (its message is the reason).
    """
    spec, call = entry.spec, run.call
    permissions = call.permissions
    reason = approval_reason(spec, permissions, entry.names)
    if reason is None:
        return False
    approver = call.approver if call.approver is not None else permissions.approver
    if approver is None:
        raise PermissionDenied(spec.name, 5, f"{reason}, so it needs approval, and no approver is set")
    request = ApprovalRequest(spec, run.arguments, reason, run.call_id, call.scope.skill, call.scope.agent)
    try:
        approved = await approver(request)
    except Exception as exc:  # an approver that cannot ask (no terminal, no elicitation) refuses
        raise PermissionDenied(spec.name, 5, f"{reason}, so it needs approval, which failed: {exc}") from exc
    if isinstance(approved, ToolResult):
        return approved
    if approved is not True:
        raise PermissionDenied(spec.name, 5, f"{reason}, and approval was declined")
    return True
