"""The pipeline: stages wrapped around one call handler, built once, Starlette style.

A stage is any callable ``(handler, **options) -> handler``. The list is
given outermost first and wrapped in reverse, so the first entry sees every
call first and every result last. The innermost handler is usually
:class:`RegistryHandler`, i.e. ``ToolRegistry.execute``, which already checks
the five layers, validates arguments against the schema and audits; the
stages add only what the registry does not do.

Whatever goes wrong, a pipeline returns a ``ToolResult``: the registry's
typed refusals (unknown tool, permission denied, invalid arguments, server
unavailable) become error results, and so does a bug in a stage. Only
cancellation propagates.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Generic, ParamSpec, Protocol, final

from .._exceptions import ToolsiftError
from ..registry import CallHandler, CallRecord, Permissions, ToolRegistry, ToolResult, TurnScope
from ..registry._internal import ProgressCallback, Unlocks
from ._call import refuse
from ._checkpoint import Checkpoint

__all__ = ["Middleware", "Pipeline", "RegistryHandler"]

logger = logging.getLogger("toolsift.pipeline")

P = ParamSpec("P")


class MiddlewareFactory(Protocol[P]):
    """A stage class (or function): takes the next handler and its options, returns a handler."""

    def __call__(self, handler: CallHandler, /, *args: P.args, **kwargs: P.kwargs) -> CallHandler: ...


@final
class Middleware(Generic[P]):
    """One stage of a pipeline and its options, type-checked against the stage's signature.

    Example::

        Middleware(ResultGuard, max_bytes=1_000_000)
    """

    def __init__(self, cls: MiddlewareFactory[P], /, *args: P.args, **kwargs: P.kwargs) -> None:
        self.cls = cls
        self.args: tuple[Any, ...] = tuple(args)
        self.kwargs: dict[str, Any] = dict(kwargs)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.cls, self.args, self.kwargs))

    def __repr__(self) -> str:
        options = ", ".join([*map(repr, self.args), *(f"{k}={v!r}" for k, v in self.kwargs.items())])
        name = getattr(self.cls, "__name__", repr(self.cls))
        return f"Middleware({name}{', ' if options else ''}{options})"


@final
class RegistryHandler:
    """The innermost handler: ``ToolRegistry.handle`` with its refusals turned into results.

    The registry has audited every refusal it raises, so the results are
    marked ``audited``.
    """

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    async def __call__(self, call: CallRecord) -> ToolResult:
        try:
            return await self.registry.handle(call)
        except ToolsiftError as exc:
            return refuse("registry", str(exc), audited=True)


@final
class Pipeline:
    """Stages around a handler; call it like ``ToolRegistry.execute``.

    The same pipeline type serves calls from MCP clients (``toolsift serve``)
    and calls the model makes in the agent loop.

    Args:
        handler: The innermost handler (see :meth:`for_registry`).
        middleware: The stages, outermost first.
    """

    def __init__(self, handler: CallHandler, middleware: Sequence[Middleware[Any]] = ()) -> None:
        app = handler
        stages: list[CallHandler] = []
        for cls, args, kwargs in reversed(middleware):
            app = cls(app, *args, **kwargs)
            stages.insert(0, app)
        self._app = app
        self.middleware = tuple(middleware)
        # Stages that are all checkpoints run in one loop in handle(), the registry called from there too.
        checkpoints = tuple(stage for stage in stages if isinstance(stage, Checkpoint))
        self._stages = checkpoints if len(checkpoints) == len(stages) else None
        self._inner = handler
        self._registry = handler.registry if isinstance(handler, RegistryHandler) else None

    @classmethod
    def for_registry(cls, registry: ToolRegistry, middleware: Sequence[Middleware[Any]] = ()) -> Pipeline:
        """A pipeline whose innermost handler is ``registry.execute``."""
        return cls(RegistryHandler(registry), middleware)

    def __repr__(self) -> str:
        return f"Pipeline({list(self.middleware)!r})"

    async def __call__(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        scope: TurnScope | None = None,
        permissions: Permissions | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        discovery: Unlocks | None = None,
    ) -> ToolResult:
        """Run one call through every stage.

        Args:
            name: The tool's canonical name (or a provider alias).
            arguments: The arguments (``None`` means ``{}``).
            scope: The turn scope; ``TurnScope()`` by default.
            permissions: The caller's permissions; ``Permissions()`` by default.
            timeout: Seconds the tool may run.
            progress: Receives the tool's progress notifications.
            discovery: The caller's unlocked tools, for ``search_tools`` (see ``CallRecord.discovery``).

        Returns:
            The tool's result, or an error result saying which stage refused
            the call and why. If the caller is cancelled, the cancellation
            reaches the tool (MCP tools send ``notifications/cancelled``) and
            propagates.
        """
        call = CallRecord(
            name,
            arguments if arguments is not None else {},
            scope if scope is not None else TurnScope(),
            permissions if permissions is not None else Permissions(),
            timeout,
            progress,
            discovery,
        )
        return await self.handle(call)

    async def handle(self, call: CallRecord) -> ToolResult:
        """Run an already built :class:`CallRecord` through every stage.

        Checkpoints run here, in one loop (see ``_checkpoint``): each stage's entry in order, the
        innermost handler, each exit in reverse, a stage's exit given the call as that stage got it.
        """
        try:
            stages = self._stages
            if stages is None:
                return await self._app(call)
            started = time.perf_counter()
            passed: list[tuple[Checkpoint, CallRecord]] = []
            result: ToolResult | None = None
            for stage in stages:
                entered = stage.enter(call)
                if isinstance(entered, ToolResult):
                    result = entered
                    break
                passed.append((stage, call))
                call = entered
            if result is None:
                registry = self._registry
                if registry is None:
                    result = await self._inner(call)
                else:
                    try:
                        result = await registry.handle(call)
                    except ToolsiftError as exc:  # audited by the registry, as RegistryHandler marks it
                        result = refuse("registry", str(exc), audited=True)
            for stage, received in reversed(passed):
                result = stage.leave(received, result, time.perf_counter() - started)
            return result
        except ToolsiftError as exc:
            return refuse("pipeline", str(exc))
        except Exception as exc:
            logger.exception("The tool pipeline failed on a call of %r", call.name)
            return refuse(
                "pipeline",
                f"Tool {call.name!r} could not be run: internal error "
                f"({type(exc).__name__}); the server log has the details",
            )
