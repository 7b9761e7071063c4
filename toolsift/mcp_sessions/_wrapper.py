"""An MCP server's tool as a registry ``Tool`` named ``server__tool``."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol, final

import mcp.types as types

from .._exceptions import InvalidToolName
from .._globs import compile_patterns
from .._names import validate_tool_name
from ..registry import Level, ToolContext, ToolResult, ToolSpec
from ._failures import FAILURE_KEY
from ._untrusted import guard_result

if TYPE_CHECKING:
    from ..config import ServerConfig
    from ..registry._internal import ProgressCallback

__all__ = ["McpToolWrapper", "ToolSession", "build_wrappers", "present_result", "tool_spec"]

logger = logging.getLogger("toolsift.mcp_sessions")


class ToolSession(Protocol):
    """What a tool calls through: the session that owns its server's connection (``McpSession``)."""

    @property
    def config(self) -> ServerConfig: ...

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, *, progress: ProgressCallback | None = None
    ) -> ToolResult: ...


def tool_spec(config: ServerConfig, tool: types.Tool) -> ToolSpec:
    """The registry's view of ``tool``: namespaced name, schemas, annotations and level kept.

    Raises:
        InvalidToolName: ``namespace__name`` breaks toolsift's naming rules.
    """
    name = validate_tool_name(f"{config.namespace}__{tool.name}")
    annotations = tool.annotations
    read_only = bool(annotations is not None and annotations.read_only_hint)
    return ToolSpec(
        name=name,
        description=tool.description or "",
        input_schema=dict(tool.input_schema),
        title=tool.title or (annotations.title if annotations is not None else None),
        annotations=annotations,
        output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        source="mcp",
        server=config.name,
        remote_name=tool.name,
        required_level=Level.READ if read_only else Level.WRITE,
        read_only=read_only,
        meta={"mcp": dict(tool.meta)} if tool.meta else {},
    )


@final
class McpToolWrapper:
    """One tool of an MCP server, callable through the registry.

    Calls go through the owning session, so a wrapper stays valid across
    restarts of its server. Results keep every content block and the
    structured content; for ``trust: untrusted`` servers the text is fenced
    (see ``_untrusted``). A result the server flagged ``isError`` gets a first
    line that names the server and the tool. A caller with its own way of
    making the call (``ToolContext.forward``: a gateway, for its client) makes
    it, and presents the result as its client reads it.

    Args:
        session: The session that owns the connection.
        tool: The tool as the server listed it.

    Raises:
        InvalidToolName: ``namespace__name`` breaks toolsift's naming rules.
    """

    def __init__(self, session: ToolSession, tool: types.Tool) -> None:
        self._session = session
        self.tool = tool
        self._spec = tool_spec(session.config, tool)

    @property
    def spec(self) -> ToolSpec:
        """The tool's registry spec."""
        return self._spec

    @property
    def session(self) -> ToolSession:
        """The session this tool calls through."""
        return self._session

    def __repr__(self) -> str:
        return f"McpToolWrapper({self._spec.name!r})"

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Call the tool on its server.

        Tool failures (an ``isError`` result, a JSON-RPC error, a timeout, a
        crash) come back as results with ``is_error=True``. If the caller is
        cancelled, the server is sent ``notifications/cancelled`` and the
        cancellation propagates.

        Raises:
            ServerDraining: The server is draining.
            ServerUnavailable: The server is connecting, restarting, failed or closed.
        """
        if ctx.forward is not None:
            return await ctx.forward(self, args, ctx)
        result = await self._session.call_tool(self.tool.name, args, progress=ctx.progress)
        return present_result(self._session.config, self.tool.name, result)


def present_result(config: ServerConfig, tool: str, result: ToolResult) -> ToolResult:
    """``result`` of server ``config``'s ``tool`` as a model reads it: untrusted text fenced, an error named.

    What a call of the tool returns, and what a gateway makes of the result of a
    task the tool ran (the same result, come later).
    """
    server = config.name
    ours = FAILURE_KEY in result.meta
    if config.trust == "untrusted":
        # A failure built by the session has toolsift's words first, then the server's.
        result = guard_result(result, server=server, tool=tool, start=1 if ours else 0)
    if result.is_error and not ours:
        header = types.TextContent(text=f"Tool {tool!r} of MCP server {server!r} reported an error:")
        result = result.model_copy(update={"content": [header, *result.content]})
    return result


def build_wrappers(session: ToolSession, tools: Iterable[types.Tool]) -> list[McpToolWrapper]:
    """Wrappers for the tools that pass the server's include/exclude globs.

    Globs match the server's own tool names. A tool whose name breaks the
    naming rules, or repeats an earlier one, is skipped with a warning; the
    rest are kept.
    """
    config = session.config
    include = compile_patterns(config.include_tools) if config.include_tools else None
    exclude = compile_patterns(config.exclude_tools) if config.exclude_tools else None
    wrappers: dict[str, McpToolWrapper] = {}
    for tool in tools:
        if include is not None and not include.matches(tool.name):
            continue
        if exclude is not None and exclude.matches(tool.name):
            continue
        if tool.name in wrappers:
            logger.warning("MCP server %r lists tool %r twice; keeping the first", config.name, tool.name)
            continue
        try:
            wrappers[tool.name] = McpToolWrapper(session, tool)
        except InvalidToolName as exc:
            logger.warning("MCP server %r: skipping tool %r: %s", config.name, tool.name, exc.reason)
    return list(wrappers.values())
