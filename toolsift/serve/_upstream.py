"""A gateway's call of an upstream server's tool, made for the client of the served request.

The call runs through the pipeline as any other; at its end the tool's session
makes it as the client would (``ClientForward``, the call record's
``forward``): over the connection of the client's era, a 2026-07-28 client's
answers and capabilities passed on (``ExchangeSender``), a handshake-era
client's ``task`` param passed on (``TaskSender``). What only the client can
act on comes back as an outcome (``_outcome``): the server's question, an
extension's result, a task the client follows, a refusal for a capability the
client did not declare.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final, final

import mcp.types as types
from mcp import Client, MCPError
from mcp.server.context import ServerRequestContext

from ..mcp_sessions import McpSession
from ..mcp_sessions._internal import McpToolWrapper, Sender, mask_wire, present_result, send_as_client
from ..registry import Tool, ToolContext, ToolResult
from ..registry._internal import ProgressCallback
from ._exchange import InputExchange, asked, client_era, input_exchange, is_modern
from ._outcome import CapabilityMissing, ClaimedResult, HandedTask, InputRequired

__all__ = ["ClientForward"]

# What the call's pipeline sees while the question travels to the client; the client sees the question.
_ASKED: Final = "The MCP server asked the calling client for input; the call goes on when the client answers."
# What it sees when the server answered with an extension's result (a task): the client reads that result.
_CLAIMED: Final = "The MCP server answered with a {kind!r} result, passed to the calling client as it came."
# What it sees of a task handed to the calling client.
_HANDED: Final = "The MCP server runs the call as a task; the calling client follows it."


@final
@dataclass(frozen=True, slots=True)
class ExchangeSender:
    """Sends a 2026-07-28 client's call with its answers and capabilities; the answer as the client reads it."""

    session: McpSession
    exchange: InputExchange

    def sends_over(self, client: Client) -> bool:
        return is_modern(client)

    async def __call__(
        self,
        client: Client,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        seconds: float | None,
        progress: ProgressCallback | None,
    ) -> types.CallToolResult | ToolResult:
        params = types.CallToolRequestParams(name=name, arguments=arguments)
        try:
            wire, capabilities = self.exchange.wire(params), self.exchange.capabilities
            raw = await send_as_client(client, "tools/call", wire, capabilities, seconds=seconds, progress=progress)
        except MCPError as exc:
            if exc.code != types.MISSING_REQUIRED_CLIENT_CAPABILITY:
                raise
            text = f"MCP server {self.session.name!r} refused tool {name!r}: {exc.message}"
            return CapabilityMissing(content=[types.TextContent(text=text)], is_error=True, refusal=exc)
        question = asked(raw)
        if question is not None:
            return InputRequired.asking(question, _ASKED)
        kind = raw.get("resultType", "complete")
        if kind != "complete":
            text = _CLAIMED.format(kind=kind)
            wire = mask_wire(raw, self.session.mask_secrets)
            return ClaimedResult(content=[types.TextContent(text=text)], server=self.session.name, tool=name, wire=wire)
        result = types.CallToolResult.model_validate(raw, by_name=False)
        if not result.is_error:
            await client.session.validate_tool_result(name, result)
        return result


@final
@dataclass(frozen=True, slots=True)
class TaskSender:
    """Sends a handshake-era client's call with its ``task`` param, for a tool its server runs as a task."""

    session: McpSession
    task: types.TaskMetadata

    def sends_over(self, client: Client) -> bool:
        return not is_modern(client)

    async def __call__(
        self,
        client: Client,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        seconds: float | None,
        progress: ProgressCallback | None,
    ) -> types.CallToolResult | ToolResult:
        params = types.CallToolRequestParams(name=name, arguments=arguments, task=self.task)
        # Sent raw: the SDK validates every tools/call answer as a CallToolResult, and knows no CreateTaskResult.
        created = await send_as_client(
            client, "tools/call", params.model_dump(by_alias=True, mode="json", exclude_none=True), None
        )
        wire = mask_wire(created, self.session.mask_secrets)
        return HandedTask(content=[types.TextContent(text=_HANDED)], server=self.session.name, tool=name, created=wire)


@final
@dataclass(frozen=True, slots=True)
class ClientForward:
    """Makes an upstream tool call for the client of the served request (a call record's ``forward``).

    Attributes:
        ctx: The served request.
        params: Its params (the ``task`` a handshake-era client asks for, a 2026-07-28 client's answers).
        fence: Present the result as a model reads it (fenced, errors named); else it passes unchanged,
            for a client that may parse the text and compare it with ``structuredContent``.
        tasks: Whether a handshake-era client's task is handed to it (the gateway routes its requests).
    """

    ctx: ServerRequestContext[Any]
    params: types.CallToolRequestParams
    fence: bool
    tasks: bool

    async def __call__(self, tool: Tool, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        if not isinstance(tool, McpToolWrapper) or not isinstance(tool.session, McpSession):
            return await tool.call(arguments, replace(context, forward=None))  # only a session's MCP tool is forwarded
        session, name = tool.session, tool.tool.name
        result = await session.call_tool(
            name, arguments, progress=context.progress, era=client_era(self.ctx), sender=self._sender(session, name)
        )
        return present_result(session.config, name, result) if self.fence else result

    def _sender(self, session: McpSession, name: str) -> Sender | None:
        exchange = input_exchange(self.ctx, self.params)
        if exchange is not None:
            return ExchangeSender(session, exchange)
        task = self.params.task
        if task is not None and self.tasks and session.catalog.can_run_as_task(name):
            return TaskSender(session, task)
        return None
