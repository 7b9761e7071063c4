"""The Tasks extension (``io.modelcontextprotocol/tasks``) of upstream servers, passed through the gateway.

A 2026-07-28 client that declares the extension may get a task instead of a
tool's result: the upstream server answers ``tools/call`` with a
``CreateTaskResult``, and the client follows the task with ``tasks/get``,
answers its questions with ``tasks/update`` and stops it with
``tasks/cancel``. The gateway is no party to the task: the call that created it
ran through the five permission layers, approval and audit like any other
(the client's capabilities went to the server with it, so the server decided
by what the client declared), and each later request goes to the server that
created the task, as it came.

Which server that is travels in the task id the client sees: the server's name
and its own task id, sealed with the key of the gateway's request states
(``$TOOLSIFT_REQUEST_STATE_KEY`` on every replica, else a key of this process).
No replica keeps a map, any replica with the key routes any task, and a client
reaches no task the gateway did not hand it: an id that does not open is an
unknown task. The server's own ids never reach the client.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, final

import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.mcpserver import require_client_extension
from mcp.server.request_state import InvalidRequestState, RequestStateCodec
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ConfigDict, Field
from starlette.requests import Request

from .._exceptions import ServerDraining, ServerUnavailable
from ..mcp_sessions import McpSession

__all__ = ["TASKS", "TaskRoutes", "declared_capabilities"]

TASKS: Final = "io.modelcontextprotocol/tasks"
# The extension's methods that name a task; each goes to the server that created it.
TASK_METHODS: Final = ("tasks/get", "tasks/update", "tasks/cancel")


class TaskRequestParams(types.RequestParams):
    """A task method's params: the task named, the rest passed on as the client sent it."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    task_id: str = Field(alias="taskId")


def declared_capabilities(ctx: ServerRequestContext[Any]) -> dict[str, Any]:
    """What the client declared for this request (wire form), to declare to an upstream server in its place."""
    declared = ctx.session.client_capabilities
    return declared.model_dump(by_alias=True, mode="json", exclude_none=True) if declared is not None else {}


def _names_task(ctx: ServerRequestContext[Any], task_id: str) -> bool:
    """Whether the request's ``Mcp-Name`` header names ``task_id``; a request not over HTTP has none to check.

    The SDK checks the header of the core methods only; the extension's name their task the same way.
    """
    request = ctx.request
    return not isinstance(request, Request) or decode_header_value(request.headers.get(MCP_NAME_HEADER)) == task_id


@final
class TaskRoutes:
    """Task ids for the gateway's clients, and the task methods routed by them to the server that made the task.

    Args:
        codec: Seals and opens the ids (the gateway's request-state codec).
        sessions: The upstream sessions by server name.
    """

    def __init__(self, codec: RequestStateCodec, sessions: Mapping[str, McpSession]) -> None:
        self._codec = codec
        self._sessions = sessions

    def register(self, server: Server[Any]) -> None:
        """Serve the task methods on ``server``."""
        for method in TASK_METHODS:
            server.add_request_handler(method, TaskRequestParams, self._handler(method))

    @staticmethod
    def advertised(sessions: Mapping[str, McpSession]) -> dict[str, dict[str, Any]]:
        """The extension as the gateway advertises it: when an upstream server does, with its settings."""
        for session in sessions.values():
            settings = session.extensions.get(TASKS)
            if settings is not None:
                return {TASKS: settings}
        return {}

    def outward(self, server: str, claimed: dict[str, Any]) -> dict[str, Any]:
        """``claimed``, an upstream server's result of an extension's shape, with a task's id made the gateway's."""
        task_id = claimed.get("taskId")
        if claimed.get("resultType") != "task" or not isinstance(task_id, str):
            return claimed
        sealed = self._codec.seal(json.dumps({"server": server, "task": task_id}).encode())
        return {**claimed, "taskId": sealed}

    def _inward(self, task_id: str) -> tuple[McpSession, str]:
        """The session and the server's own id of the task the client calls ``task_id``."""
        try:
            route = json.loads(self._codec.unseal(task_id))
            server, upstream = route["server"], route["task"]
        except (InvalidRequestState, ValueError, KeyError, TypeError):
            raise MCPError(
                types.INVALID_PARAMS, f"Unknown task {task_id!r}: this gateway created no such task"
            ) from None
        session = self._sessions.get(server)
        if session is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown task {task_id!r}: its MCP server {server!r} is not served")
        return session, upstream

    def _handler(
        self, method: str
    ) -> Callable[[ServerRequestContext[Any], TaskRequestParams], Awaitable[dict[str, Any]]]:
        async def forward(ctx: ServerRequestContext[Any], params: TaskRequestParams) -> dict[str, Any]:
            """Send ``method`` to the server that created the task, as the client sent it but for the task's id."""
            if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                raise MCPError(types.METHOD_NOT_FOUND, f"{method} is a method of MCP 2026-07-28's Tasks extension")
            require_client_extension(ctx, TASKS)
            if not _names_task(ctx, params.task_id):
                raise MCPError(types.HEADER_MISMATCH, f"{MCP_NAME_HEADER} header does not match the request's 'taskId'")
            session, upstream = self._inward(params.task_id)
            wire = params.model_dump(by_alias=True, mode="json", exclude_none=True)
            wire["taskId"] = upstream
            try:
                result = await session.send_as_client(method, wire, declared_capabilities(ctx), name=upstream)
            except (ServerUnavailable, ServerDraining) as exc:
                raise MCPError(types.INTERNAL_ERROR, str(exc)) from exc
            return {**result, "taskId": params.task_id} if result.get("taskId") == upstream else result

        return forward
