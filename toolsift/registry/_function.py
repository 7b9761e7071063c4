"""Plain Python functions as tools, with the input schema derived from the signature."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar, get_type_hints, overload

import anyio.to_thread
import mcp.types as mcp_types
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from .._names import validate_tool_name
from ._levels import Level
from ._result import ToolResult
from ._spec import ToolSpec
from ._tools import ToolContext

__all__ = ["FunctionTool", "tool"]

F = TypeVar("F", bound=Callable[..., Any])


def _arguments_model(fn: Callable[..., Any], name: str) -> tuple[type[BaseModel], str | None]:
    """Build a pydantic model of ``fn``'s parameters; return it and the name of a ToolContext parameter."""
    hints = get_type_hints(fn, include_extras=True)  # keep Annotated[..., Field(description=...)]
    fields: dict[str, Any] = {}
    context_param: str | None = None
    for param in inspect.signature(fn).parameters.values():
        annotation = hints.get(param.name, Any)
        if annotation is ToolContext:
            context_param = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"Tool {name!r}: *args and **kwargs cannot be described by a schema")
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, default)
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=False)
    return create_model(f"{name}_arguments", __config__=config, **fields), context_param


class FunctionTool:
    """A typed Python function (sync or async) as a registry tool.

    Arguments are validated by the pydantic model built from the signature;
    a sync function runs in a worker thread so it cannot block the event loop.
    A parameter annotated ``ToolContext`` receives the call's context.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        title: str | None = None,
        read_only: bool = False,
        required_level: Level | str | None = None,
        required_permissions: frozenset[str] | set[str] = frozenset(),
        annotations: mcp_types.ToolAnnotations | None = None,
    ) -> None:
        tool_name = validate_tool_name(name or fn.__name__)
        self._fn = fn
        self._model, self._context_param = _arguments_model(fn, tool_name)
        schema = self._model.model_json_schema()
        schema.pop("title", None)
        level = (
            Level.parse(required_level) if required_level is not None else (Level.READ if read_only else Level.WRITE)
        )
        if annotations is None:
            annotations = mcp_types.ToolAnnotations(read_only_hint=read_only)
        self._spec = ToolSpec(
            name=tool_name,
            description=description or inspect.getdoc(fn) or "",
            input_schema=schema,
            title=title,
            annotations=annotations,
            source="function",
            required_level=level,
            required_permissions=frozenset(required_permissions),
            read_only=read_only,
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool's static description."""
        return self._spec

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate ``args`` against the signature and run the function."""
        try:
            parsed = self._model.model_validate(args)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors())
            return ToolResult.error(f"Tool {self._spec.name!r}: invalid arguments: {problems}")
        kwargs = {key: getattr(parsed, key) for key in type(parsed).model_fields}
        if self._context_param is not None:
            kwargs[self._context_param] = ctx
        if inspect.iscoroutinefunction(self._fn):
            value = await self._fn(**kwargs)
        else:
            value = await anyio.to_thread.run_sync(lambda: self._fn(**kwargs))
            if inspect.isawaitable(value):
                value = await value
        return ToolResult.from_value(value)

    def __repr__(self) -> str:
        return f"FunctionTool({self._spec.name!r})"


@overload
def tool(fn: F, /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    read_only: bool = False,
    required_level: Level | str | None = None,
    required_permissions: frozenset[str] | set[str] = frozenset(),
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    read_only: bool = False,
    required_level: Level | str | None = None,
    required_permissions: frozenset[str] | set[str] = frozenset(),
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Turn a function into a :class:`FunctionTool`; use bare (``@tool``) or with options.

    Example::

        @tool(read_only=True)
        async def word_count(text: str) -> int:
            "Count the words in a text."
            return len(text.split())
    """

    def wrap(function: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(
            function,
            name=name,
            description=description,
            title=title,
            read_only=read_only,
            required_level=required_level,
            required_permissions=required_permissions,
        )

    return wrap(fn) if fn is not None else wrap
