"""Running one call: the five layers, argument validation, timeout, audit."""

from __future__ import annotations

import itertools
import secrets
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from .._exceptions import InvalidArguments, PermissionDenied, ToolNotFound, ToolsiftError
from ._approval import ApprovalRequest, approval_reason
from ._arguments import argument_problems
from ._audit import AuditEvent, AuditKind, redact
from ._permissions import PermissionLayer, Permissions, check_permissions
from ._scope import TurnScope
from ._tools import ProgressCallback, ToolContext, ToolResult
from ._visibility import Entry, hidden_reason
from .formats import drop_optional_nulls

if TYPE_CHECKING:
    from ._registry import ToolRegistry

__all__ = ["Executor"]

_MAX_ERRORS = 5


class Executor:
    """The call path of a :class:`ToolRegistry`; one per registry."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
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

    async def execute(
        self,
        name: str,
        args: Mapping[str, Any] | None,
        scope: TurnScope,
        permissions: Permissions,
        *,
        timeout: float | None,
        progress: ProgressCallback | None,
    ) -> ToolResult:
        self._frozen = True
        call_id = f"{self._id_prefix}{next(self._ids):08x}"
        started = time.perf_counter()
        arguments: dict[str, Any] = dict(args) if isinstance(args, Mapping) else {}
        entry: Entry | None = None
        try:
            entry = self._registry._entry(name)
            denial = hidden_reason(entry, scope)
            # A tool hidden only for not being surfaced (layer 1) that layer 5 refuses anyway is refused for
            # the layer-5 reason: search_tools lists it with that reason, and the refusal must say the same.
            only_layer_1 = denial is not None and denial[0] == 1 and hidden_reason(
                entry, scope.with_unlocked([entry.spec.name])) is None
            if denial is None or only_layer_1:
                reason = check_permissions(entry.spec, arguments, permissions, self._layers, names=entry.names)
                denial = (5, reason) if reason is not None else denial
            if denial is not None:
                raise PermissionDenied(entry.spec.name, denial[0], denial[1])
            if args is not None and not isinstance(args, Mapping):
                raise InvalidArguments(entry.spec.name, [f"arguments must be a JSON object, got {type(args).__name__}"])
            problems, has_null = argument_problems(arguments)
            if problems:
                raise InvalidArguments(entry.spec.name, problems)
            if has_null:  # a strict-mode model sends null for every optional property it leaves out
                arguments = drop_optional_nulls(entry.spec.input_schema, arguments)
            schema_problem = self._validate(entry, arguments)
            approved = schema_problem is None and await _approve(entry, arguments, permissions, scope, call_id)
        except ToolNotFound as exc:
            self._audit("tool.denied", name, entry, scope, call_id, started, arguments, layer=2, reason=str(exc))
            raise
        except PermissionDenied as exc:
            self._audit("tool.denied", exc.tool, entry, scope, call_id, started, arguments, layer=exc.layer,
                        reason=exc.reason)
            raise
        except InvalidArguments as exc:
            self._audit("tool.failed", exc.tool, entry, scope, call_id, started, arguments, reason=str(exc))
            raise
        spec = entry.spec
        refusal = schema_problem if schema_problem is not None else await self._record_start(
            entry, scope, call_id, started, arguments)
        if refusal is not None:
            result = ToolResult.error(refusal)
        else:
            ctx = ToolContext(call_id=call_id, scope=scope, permissions=permissions, timeout=timeout,
                              progress=progress)
            try:
                result = await self._run(entry, arguments, ctx)
            except ToolsiftError as exc:
                self._audit("tool.failed", spec.name, entry, scope, call_id, started, arguments, reason=str(exc))
                raise
        self._audit(
            "tool.failed" if result.is_error else "tool.executed", spec.name, entry, scope, call_id, started,
            arguments, reason=result.text_content()[:200] if result.is_error else None,
            flags=(*result.meta.get("flags", ()), *(("approved",) if approved else ())),
        )
        return result

    async def _record_start(self, entry: Entry, scope: TurnScope, call_id: str, started: float,
                            arguments: Mapping[str, Any]) -> str | None:
        """Audit the start of a call about to run, where the log records starts; why it may not run, or None.

        The record is delivered before the tool runs, so a process killed during the call leaves a trace of
        a call whose effect may have happened; a call whose start cannot be recorded does not run.
        """
        audit = self._registry.audit
        if not audit.record_starts:
            return None
        self._audit("tool.started", entry.spec.name, entry, scope, call_id, started, arguments)
        try:
            await audit.flush()
        except TimeoutError as exc:
            return f"Tool {entry.spec.name!r} was not run: its start could not be audited: {exc}"
        return None

    async def _run(self, entry: Entry, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name = entry.spec.name
        try:
            if ctx.timeout is None:  # no cancel scope at all: it is the hot path of every MCP call
                return await entry.tool.call(arguments, ctx)
            with anyio.move_on_after(ctx.timeout):
                return await entry.tool.call(arguments, ctx)
            # Reached only when the deadline cancelled the call (the tool saw the cancellation).
            return ToolResult.error(f"Tool {name!r} timed out after {ctx.timeout:g}s")
        except ToolsiftError:
            raise
        except Exception as exc:
            return ToolResult.error(f"Tool {name!r} failed: {type(exc).__name__}: {exc}")

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
        kind: AuditKind,
        tool: str,
        entry: Entry | None,
        scope: TurnScope,
        call_id: str,
        started: float,
        arguments: Mapping[str, Any],
        *,
        layer: int | None = None,
        reason: str | None = None,
        flags: tuple[str, ...] = (),
    ) -> None:
        outcome = {"tool.started": "started", "tool.executed": "ok", "tool.failed": "error",
                   "tool.denied": "denied"}[kind]
        self._registry.audit.emit(AuditEvent(
            kind=kind,
            tool=tool,
            outcome=outcome,  # type: ignore[arg-type]
            call_id=call_id,
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
            server=entry.spec.server if entry is not None else None,
            skill=scope.skill,
            agent=scope.agent,
            layer=layer,
            reason=reason,
            arguments=redact(arguments),
            flags=flags,
        ))


async def _approve(entry: Entry, arguments: Mapping[str, Any], permissions: Permissions, scope: TurnScope,
                   call_id: str) -> bool:
    """Ask the caller's approver when the call asks; True when it was asked and approved.

    Raises:
        PermissionDenied: Layer 5, when the call asks and there is no approver,
            the approver says no, or the approver fails (its message is the reason).
    """
    spec = entry.spec
    reason = approval_reason(spec, permissions, entry.names)
    if reason is None:
        return False
    if permissions.approver is None:
        raise PermissionDenied(spec.name, 5, f"{reason}, so it needs approval, and no approver is set")
    request = ApprovalRequest(spec, arguments, reason, call_id, scope.skill, scope.agent)
    try:
        approved = await permissions.approver(request)
    except Exception as exc:  # an approver that cannot ask (no terminal, no elicitation) refuses
        raise PermissionDenied(spec.name, 5, f"{reason}, so it needs approval, which failed: {exc}") from exc
    if approved is not True:
        raise PermissionDenied(spec.name, 5, f"{reason}, and approval was declined")
    return True
