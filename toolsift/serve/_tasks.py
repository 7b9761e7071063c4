"""Tasks of upstream servers through the gateway, in both eras: MCP 2025-11-25's and the 2026-07-28 extension's.

A client may get a task instead of a tool's result. A 2026-07-28 client that
declares the Tasks extension (``io.modelcontextprotocol/tasks``) gets one when
the upstream server answers ``tools/call`` with a ``CreateTaskResult``; it
follows the task with ``tasks/get`` (which inlines the result once the task
completes), answers its questions with ``tasks/update`` and stops it with
``tasks/cancel``. The extension has no ``tasks/result`` and no ``tasks/list``:
for such a client they stay unknown methods (-32601), as the extension
requires of a server. A 2025-11-25 client asks for one with the ``task`` param
of ``tools/call``, for a tool whose server runs tasks (a handshake-era
connection); it follows it with ``tasks/get``, fetches the result with
``tasks/result``, lists its tasks with ``tasks/list`` and stops one with
``tasks/cancel``. The gateway is no party to the task: the call that created
it ran through the five permission layers, approval and audit like any other,
and each later request goes to the server that created the task.

Which server that is travels in the task id the client sees: the server's name
and its own task id, sealed with the key of the gateway's request states
(``$TOOLSIFT_REQUEST_STATE_KEY`` on every replica, else a key of this process).
No replica keeps a map to route, any replica with the key routes any task, and
a client reaches no task the gateway did not hand it: an id that does not open
is an unknown task. The server's own ids never reach the client.

The id also names the tool the task runs, so that the tool's result reaches the
client as the call's own result would have: secrets masked, untrusted text
fenced when the gateway fences, the size rule applied.

A listing is the one thing an id cannot carry: the upstream server lists the
tasks of its connection, which is the gateway's and serves every client. So
the gateway keeps, per client connection, the ids of the tasks it handed that
client, and ``tasks/list`` shows only those; its cursor is sealed too and says
which server's page comes next.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, final
from weakref import WeakKeyDictionary

import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.mcpserver import require_client_extension
from mcp.server.request_state import InvalidRequestState, RequestStateCodec
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from mcp_types.methods import serialize_server_result
from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request

from .._exceptions import ServerDraining, ServerUnavailable
from ..mcp_sessions import McpSession
from ..mcp_sessions._internal import mask_wire, send_as_client
from ..registry import ToolResult, ToolSpec
from ._relay import client_of

__all__ = ["TASKS", "PresentResult", "TaskRoutes", "declared_capabilities"]

TASKS: Final = "io.modelcontextprotocol/tasks"
# The methods that name a task; each goes to the server that created it. tasks/update is the extension's only,
# tasks/result 2025-11-25's only.
TASK_METHODS: Final = ("tasks/get", "tasks/update", "tasks/cancel", "tasks/result")
# Where a message names the task it belongs to (2025-11-25).
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"
# What the extension removed of 2025-11-25's methods, and why the client need not miss it.
_REMOVED: Final = {
    "tasks/result": "a completed task's result is inlined in tasks/get",
    "tasks/list": "there is no listing of tasks",
}

#: A tool's result as the gateway hands it to a client: ``(server, tool, called, result)``, where ``tool`` is
#: the server's name of the tool and ``called`` the name the client called it by.
PresentResult = Callable[[str, str, str, ToolResult], Awaitable[ToolResult]]


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


def _removed(method: str) -> MCPError:
    """The answer to a 2026-07-28 client's 2025-11-25 task method, which the extension removed."""
    return MCPError(
        types.METHOD_NOT_FOUND, f"{method} is not a method of MCP 2026-07-28's Tasks extension: {_REMOVED[method]}"
    )


async def _send(
    session: McpSession,
    method: str,
    params: dict[str, Any],
    capabilities: dict[str, Any] | None,
    *,
    name: str | None = None,
) -> dict[str, Any]:
    """Send a request of the client's to the upstream server as the client's own; the result as it came, masked.

    ``capabilities`` None is a handshake-era client's request, which goes over the handshake-era connection
    where the session keeps one (where that client's calls made their tasks). An upstream that cannot take
    it is answered as a JSON-RPC error.
    """
    try:
        client = await session.client("handshake" if capabilities is None else None)
        with session.tracked():
            return mask_wire(
                await send_as_client(client, method, params, capabilities, name=name), session.mask_secrets
            )
    except (ServerUnavailable, ServerDraining) as exc:
        raise MCPError(types.INTERNAL_ERROR, str(exc)) from exc


def _relabelled(answer: dict[str, Any], upstream: str, sealed: str) -> dict[str, Any]:
    """``answer`` with the server's id of a task replaced by the client's, wherever the answer names it."""
    relabelled = dict(answer)
    if relabelled.get("taskId") == upstream:  # tasks/get and tasks/cancel answers, the extension's results
        relabelled["taskId"] = sealed
    task = relabelled.get("task")
    if isinstance(task, dict) and task.get("taskId") == upstream:  # 2025-11-25's CreateTaskResult
        relabelled["task"] = {**task, "taskId": sealed}
    meta = relabelled.get("_meta")
    related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
    if isinstance(meta, dict) and isinstance(related, dict) and related.get("taskId") == upstream:
        relabelled["_meta"] = {**meta, RELATED_TASK: {**related, "taskId": sealed}}
    return relabelled


async def _answer_task_calls(server: Server[Any], ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: answer a 2025-11-25 client's ``tools/call`` that asks for a task, with the task if made.

    The SDK shapes a handshake-era ``tools/call`` answer as a ``CallToolResult``
    (it serves no 2025-11-25 tasks of its own), which would strip a
    ``CreateTaskResult``; so such a call runs the ``tools/call`` handler here and
    shapes the answer itself: a task as it is, any other result as the SDK would.
    """
    params, entry = ctx.params, server.get_request_handler("tools/call")
    asks = ctx.method == "tools/call" and isinstance(params, Mapping) and params.get("task") is not None
    if not asks or entry is None or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return await call_next(ctx)
    result = await entry.handler(ctx, entry.params_type.model_validate(params, by_name=False))
    if isinstance(result, types.ErrorData):
        raise MCPError.from_error_data(result)
    wire = result if isinstance(result, dict) else _dump(result)
    if isinstance(wire.get("task"), dict):
        return wire
    return serialize_server_result("tools/call", ctx.protocol_version, wire)


def _dump(result: object) -> dict[str, Any]:
    if not isinstance(result, BaseModel):
        raise TypeError(f"the tools/call handler returned {type(result).__name__}; expected a result model or dict")
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


@dataclass(frozen=True, slots=True)
class _Route:
    """What a task id the gateway handed out opens to: where the task runs, and the call that made it."""

    server: str
    task: str  # the server's own id
    tool: str  # the server's name of the tool
    called: str  # the name the client called the tool by


class _ListParams(types.PaginatedRequestParams):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


@final
class TaskRoutes:
    """Task ids for the gateway's clients, and the task methods routed by them to the server that made the task.

    Args:
        codec: Seals and opens the ids (the gateway's request-state codec).
        sessions: The upstream sessions by server name.
        present: Makes a task's result what its call's result would have been for the client.
    """

    def __init__(self, codec: RequestStateCodec, sessions: Mapping[str, McpSession], present: PresentResult) -> None:
        self._codec = codec
        self._sessions = sessions
        self._present = present
        # Per 2025-11-25 client connection: by server, the server's ids of the tasks handed to that client, and
        # the ids the client knows them by.
        self._handed: WeakKeyDictionary[Any, dict[str, dict[str, str]]] = WeakKeyDictionary()

    def register(self, server: Server[Any]) -> None:
        """Serve the task methods on ``server``, and 2025-11-25's ``CreateTaskResult`` of its ``tools/call``."""
        for method in TASK_METHODS:
            server.add_request_handler(method, TaskRequestParams, self._handler(method))
        server.add_request_handler("tasks/list", _ListParams, self._list)
        server.middleware.append(partial(_answer_task_calls, server))

    @staticmethod
    def advertised(sessions: Mapping[str, McpSession]) -> dict[str, dict[str, Any]]:
        """The extension as the gateway advertises it: when an upstream server does, with its settings."""
        for session in sessions.values():
            settings = session.extensions.get(TASKS)
            if settings is not None:
                return {TASKS: settings}
        return {}

    @staticmethod
    def core_capability(sessions: Mapping[str, McpSession]) -> types.ServerTasksCapability | None:
        """2025-11-25's ``tasks`` capability, for handshake-era clients: when an upstream server runs tools as tasks."""
        if not any(
            session.catalog.can_run_as_task(tool)
            for session in sessions.values()
            for tool in session.catalog.task_support
        ):
            return None
        tools = types.TasksToolsCapability(call=types.TasksCallCapability())
        return types.ServerTasksCapability(
            list=types.TasksListCapability(),
            cancel=types.TasksCancelCapability(),
            requests=types.ServerTasksRequestsCapability(tools=tools),
        )

    def with_task_support(self, tools: list[types.Tool], spec_of: Callable[[str], ToolSpec | None]) -> list[types.Tool]:
        """``tools`` as a 2025-11-25 client lists them: each whose server runs it as a task says the client may ask.

        ``optional`` whatever the server says: a plain call of a tool the server runs
        only as a task works through the gateway too, which then follows the task itself.

        Args:
            tools: The tools listed.
            spec_of: The registry spec of a listed gateway tool by its listed name; None for others.
        """
        listed: list[types.Tool] = []
        for tool in tools:
            spec = spec_of(tool.name)
            session = self._sessions.get(spec.server) if spec is not None and spec.server is not None else None
            remote = spec.remote_name if spec is not None else None
            if session is not None and remote is not None and session.catalog.can_run_as_task(remote):
                tool = tool.model_copy(update={"execution": types.ToolExecution(task_support="optional")})
            listed.append(tool)
        return listed

    def outward(self, server: str, claimed: dict[str, Any], *, tool: str, called: str) -> dict[str, Any]:
        """``claimed``, an upstream server's result of an extension's shape, with a task's id made the gateway's.

        Args:
            server: The server that answered.
            claimed: Its result.
            tool: The server's name of the tool called.
            called: The name the client called it by.
        """
        task_id = claimed.get("taskId")
        if claimed.get("resultType") != "task" or not isinstance(task_id, str):
            return claimed
        return _relabelled(claimed, task_id, self._seal(_Route(server, task_id, tool, called)))

    def handed(
        self, ctx: ServerRequestContext[Any], server: str, created: dict[str, Any], *, tool: str, called: str
    ) -> dict[str, Any]:
        """``created``, a server's 2025-11-25 ``CreateTaskResult``, under the gateway's id, kept for the client's list.

        Args:
            ctx: The request of the client the task is handed to.
            server: The server that made the task.
            created: Its result.
            tool: The server's name of the tool called.
            called: The name the client called it by.
        """
        task = created.get("task")
        task_id = task.get("taskId") if isinstance(task, dict) else None
        if not isinstance(task_id, str):
            return created
        sealed = self._seal(_Route(server, task_id, tool, called))
        self._handed.setdefault(client_of(ctx.session), {}).setdefault(server, {})[task_id] = sealed
        return _relabelled(created, task_id, sealed)

    def _seal(self, route: _Route) -> str:
        fields = {"server": route.server, "task": route.task, "tool": route.tool, "called": route.called}
        return self._codec.seal(json.dumps(fields).encode())

    def _open(self, sealed: str, unknown: str) -> dict[str, Any]:
        """What ``sealed`` (an id or a cursor the gateway handed out) holds; else -32602 with ``unknown``."""
        try:
            opened = json.loads(self._codec.unseal(sealed))
        except (InvalidRequestState, ValueError):
            opened = None
        if not isinstance(opened, dict):
            raise MCPError(types.INVALID_PARAMS, unknown)
        return opened

    def _inward(self, task_id: str) -> tuple[_Route, McpSession]:
        """Where the task the client calls ``task_id`` runs, and the call that made it."""
        unknown = f"Unknown task {task_id!r}: this gateway created no such task"
        opened = self._open(task_id, unknown)
        try:
            route = _Route(opened["server"], opened["task"], opened["tool"], opened["called"])
        except KeyError:
            raise MCPError(types.INVALID_PARAMS, unknown) from None
        session = self._sessions.get(route.server)
        if session is None:
            raise MCPError(
                types.INVALID_PARAMS, f"Unknown task {task_id!r}: its MCP server {route.server!r} is not served"
            )
        return route, session

    async def _presented(self, route: _Route, result: dict[str, Any]) -> dict[str, Any]:
        """``result``, a tool's result of the task (wire form), as the call's result would have been."""
        tool_result = ToolResult.from_mcp(types.CallToolResult.model_validate(result, by_name=False))
        shown = await self._present(route.server, route.tool, route.called, tool_result)
        return {**result, **shown.to_mcp().model_dump(by_alias=True, mode="json", exclude_none=True)}

    def _handler(
        self, method: str
    ) -> Callable[[ServerRequestContext[Any], TaskRequestParams], Awaitable[dict[str, Any]]]:
        async def forward(ctx: ServerRequestContext[Any], params: TaskRequestParams) -> dict[str, Any]:
            """Send ``method`` to the server that created the task, as the client sent it but for the task's id."""
            modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
            if modern:
                if method in _REMOVED:
                    raise _removed(method)
                require_client_extension(ctx, TASKS)
                if not _names_task(ctx, params.task_id):
                    raise MCPError(
                        types.HEADER_MISMATCH, f"{MCP_NAME_HEADER} header does not match the request's 'taskId'"
                    )
            elif method == "tasks/update":
                raise MCPError(types.METHOD_NOT_FOUND, f"{method} is a method of MCP 2026-07-28's Tasks extension")
            route, session = self._inward(params.task_id)
            wire = params.model_dump(by_alias=True, mode="json", exclude_none=True)
            wire["taskId"] = route.task
            capabilities = declared_capabilities(ctx) if modern else None
            answer = await _send(session, method, wire, capabilities, name=route.task if modern else None)
            if method == "tasks/result":  # 2025-11-25: the answer is the tool's result
                answer = await self._presented(route, answer)
            elif isinstance(inlined := answer.get("result"), dict):  # 2026-07-28: a completed task's, inlined
                answer = {**answer, "result": await self._presented(route, inlined)}
            return _relabelled(answer, route.task, params.task_id)

        return forward

    async def _list(self, ctx: ServerRequestContext[Any], params: _ListParams) -> dict[str, Any]:
        """One page of the tasks handed to this client (2025-11-25), from one server's listing, ids sealed."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            raise _removed("tasks/list")
        handed = self._handed.get(client_of(ctx.session), {})
        servers = sorted(server for server in handed if server in self._sessions)
        if params.cursor is None:
            if not servers:
                return {"tasks": []}
            server, cursor = servers[0], None
        else:
            opened = self._open(
                params.cursor, f"Unknown cursor {params.cursor!r}: this gateway handed out no such cursor"
            )
            server, cursor = str(opened.get("server")), opened.get("cursor")
            if server not in servers:
                raise MCPError(types.INVALID_PARAMS, f"Unknown cursor {params.cursor!r}: no tasks of this client there")
        page = await _send(self._sessions[server], "tasks/list", {"cursor": cursor} if cursor else {}, None)
        mine = handed[server]
        tasks = [
            {**task, "taskId": mine[task["taskId"]]}
            for task in page.get("tasks", [])
            if isinstance(task, dict) and task.get("taskId") in mine
        ]
        following = servers[servers.index(server) + 1 :]
        if isinstance(page.get("nextCursor"), str):
            after: dict[str, Any] | None = {"server": server, "cursor": page["nextCursor"]}
        else:
            after = {"server": following[0], "cursor": None} if following else None
        if after is None:
            return {"tasks": tasks}
        return {"tasks": tasks, "nextCursor": self._codec.seal(json.dumps(after).encode())}
