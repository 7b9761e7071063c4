"""A tool table for examples built on the SDK's low-level ``Server``.

The low-level ``Server`` serves exactly the schemas it is given, which is why
the large and the faulty example use it. It also leaves three jobs to its
user, and :class:`ToolTable` does them once for both examples:

- it validates arguments against each tool's ``inputSchema`` (the SDK does
  not) and answers bad arguments with an ``isError`` result naming the problem;
- it advertises ``tools.listChanged`` to handshake-era clients (the SDK hides it
  unless ``create_initialization_options`` is told) and announces changes in
  both protocol eras: ``notifications/tools/list_changed`` on handshake-era
  sessions and a ``ToolsListChanged`` event for 2026-07-28 ``subscriptions/listen``
  streams;
- it pages ``tools/list`` when asked to (``page_size``), with the offset as cursor.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp.types as types
from jsonschema import Draft202012Validator
from mcp import MCPError
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged

ToolHandler = Callable[[ServerRequestContext[Any], dict[str, Any]], Awaitable[types.CallToolResult]]
"""A tool's code: ``(ctx, arguments) -> result``, the SDK's handler shape."""


def text_result(text: str, *, is_error: bool = False, structured: dict[str, Any] | None = None) -> types.CallToolResult:
    """A tool result with one text block (and optional structured content)."""
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=structured, is_error=is_error
    )


class ListChangedServer(Server[Any]):
    """A low-level ``Server`` that advertises ``tools.listChanged`` in both protocol eras."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        # The HTTP session manager calls this without arguments; default to the truth.
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True), experimental_capabilities, extensions
        )


class ToolTable:
    """Tools by name, each a ``types.Tool`` plus an async handler taking the arguments."""

    def __init__(self, *, page_size: int = 0) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self._page_size = page_size
        self._tools: dict[str, tuple[types.Tool, Draft202012Validator, ToolHandler]] = {}

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def add(self, tool: types.Tool, handler: ToolHandler) -> None:
        """Register (or replace) a tool; its input schema must be a valid JSON Schema."""
        Draft202012Validator.check_schema(tool.input_schema)
        self._tools[tool.name] = (tool, Draft202012Validator(tool.input_schema), handler)

    def remove(self, name: str) -> None:
        """Unregister a tool; unknown names are ignored."""
        self._tools.pop(name, None)

    def tools(self) -> list[types.Tool]:
        """All tools, in registration order."""
        return [tool for tool, _, _ in self._tools.values()]

    async def announce_change(self, ctx: ServerRequestContext[Any]) -> None:
        """Tell clients of both protocol eras that the tool list changed."""
        await ctx.session.send_tool_list_changed()  # handshake era; dropped on 2026-07-28 connections
        await self.bus.publish(ToolsListChanged())  # 2026-07-28 subscriptions/listen streams

    async def on_list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = self.tools()
        if not self._page_size:
            return types.ListToolsResult(tools=tools)
        cursor = params.cursor if params is not None else None
        if cursor is not None and not cursor.isdigit():
            raise MCPError(types.INVALID_PARAMS, f"Invalid cursor {cursor!r}: expected an offset")
        start = int(cursor or 0)
        end = start + self._page_size
        return types.ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)

    async def on_call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        entry = self._tools.get(params.name)
        if entry is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name!r}")
        _, validator, handler = entry
        arguments = params.arguments or {}
        problems = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
        if problems:
            lines = [f"{'/'.join(map(str, p.absolute_path)) or '(arguments)'}: {p.message}" for p in problems]
            return text_result(f"Invalid arguments for {params.name}: " + "; ".join(lines), is_error=True)
        return await handler(ctx, arguments)

    def server(
        self, name: str, *, version: str, instructions: str | None = None, listen: bool = True, **handlers: Any
    ) -> Server[Any]:
        """A ``Server`` serving this table (plus any extra ``on_*`` handlers).

        ``listen=False`` leaves ``subscriptions/listen`` unserved, as on a server
        that predates the 2026-07-28 protocol.
        """
        return ListChangedServer(
            name,
            version=version,
            instructions=instructions,
            on_list_tools=self.on_list_tools,
            on_call_tool=self.on_call_tool,
            on_subscriptions_listen=self.listen if listen else None,
            **handlers,
        )
