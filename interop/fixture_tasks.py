"""The Tasks extension (``io.modelcontextprotocol/tasks``) for the 2026-07-28 conformance fixture.

The SDK serves no Tasks extension of its own, so this one is written to the
conformance suite's ``tasks-*`` scenario descriptions: task-supporting tools
answer a client that declared the extension with a flat ``CreateTaskResult``
and run in the background; ``tasks/get`` reports status and inlines the
result or error; ``tasks/update`` delivers answers to a task that is waiting
for input; ``tasks/cancel`` stops a running one. A client that did not declare
the extension gets the tools' synchronous results, or ``-32021`` for a tool
whose task support is ``required``. Tasks live in memory for the process.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import anyio
import mcp.types as types
from anyio.abc import TaskGroup
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding, ToolBinding
from mcp.server.mcpserver import require_client_extension
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

TASKS = "io.modelcontextprotocol/tasks"
TTL_MS = 300_000
POLL_INTERVAL_MS = 100
FAILING_JOB_SECONDS = 0.5  # the spec's "after ~1s", shortened: the suite only waits for the terminal state

# A task asks its client for input by handing requests to `ask`, which returns the answers once all arrived.
Ask = Callable[[dict[str, types.InputRequest]], Awaitable[dict[str, Any]]]
Job = Callable[[dict[str, Any], Ask], Awaitable[types.CallToolResult]]


class TaskParams(types.RequestParams):
    task_id: str = Field(alias="taskId")


class TaskUpdateParams(TaskParams):
    input_responses: dict[str, Any] = Field(default_factory=dict, alias="inputResponses")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _text(text: str, *, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)


def _elicit(message: str, properties: dict[str, Any]) -> types.ElicitRequest:
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))


@dataclass
class _Task:
    """One task's state: what ``tasks/get`` reports, and what the running job waits on."""

    task_id: str
    status: Literal["working", "input_required", "completed", "failed", "cancelled"] = "working"
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    pending: dict[str, types.InputRequest] = field(default_factory=dict)
    answers: dict[str, Any] = field(default_factory=dict)
    answered: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    def settle(self, status: Literal["working", "input_required", "completed", "failed", "cancelled"]) -> None:
        self.status = status
        self.updated_at = _now()

    def envelope(self) -> dict[str, Any]:
        return {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
            "ttlMs": TTL_MS,
            "pollIntervalMs": POLL_INTERVAL_MS,
        }

    async def ask(self, requests: dict[str, types.InputRequest]) -> dict[str, Any]:
        self.pending, self.answers, self.answered = dict(requests), {}, anyio.Event()
        self.settle("input_required")
        await self.answered.wait()
        self.settle("working")
        return self.answers


# -- the task-supporting tools -----------------------------------------------------------------


async def slow_compute(arguments: dict[str, Any], ask: Ask) -> types.CallToolResult:
    await anyio.sleep(float(arguments.get("seconds", 0)))
    return _text(f"Computed {arguments.get('label', 'result')}")


async def failing_job(arguments: dict[str, Any], ask: Ask) -> types.CallToolResult:
    await anyio.sleep(FAILING_JOB_SECONDS)
    return _text("The job failed, as it always does", is_error=True)


async def protocol_error_job(arguments: dict[str, Any], ask: Ask) -> types.CallToolResult:
    raise MCPError(code=types.INTERNAL_ERROR, message="The job broke down below the tool")


async def confirm_delete(arguments: dict[str, Any], ask: Ask) -> types.CallToolResult:
    filename = arguments.get("filename", "the file")
    answers = await ask({"confirm": _elicit(f"Delete {filename}?", {"confirm": {"type": "boolean"}})})
    confirmed = (answers.get("confirm") or {}).get("action") == "accept"
    return _text(f"Deleted {filename}" if confirmed else f"Kept {filename}")


async def multi_input(arguments: dict[str, Any], ask: Ask) -> types.CallToolResult:
    answers = await ask(
        {
            "name": _elicit("What is your name?", {"name": {"type": "string"}}),
            "confirm": _elicit("Shall we go on?", {"confirm": {"type": "boolean"}}),
        }
    )
    return _text(f"Both answers arrived: {sorted(answers)}")


def greeting_job(name: str) -> Job:
    async def greet(arguments: dict[str, Any], ask: Ask) -> types.CallToolResult:
        return _text(f"Hello, {name}! The task has finished.")

    return greet


JOBS: dict[str, tuple[Job, Literal["optional", "required"]]] = {
    "slow_compute": (slow_compute, "optional"),
    "failing_job": (failing_job, "required"),
    "protocol_error_job": (protocol_error_job, "optional"),
    "confirm_delete": (confirm_delete, "optional"),
    "multi_input": (multi_input, "optional"),
}
COMPOSED = "test_tool_with_task"  # asks by InputRequiredResult first, then becomes a task


async def _no_input(requests: dict[str, types.InputRequest]) -> dict[str, Any]:
    raise MCPError(code=types.INVALID_PARAMS, message="This tool needs input only a task can wait for")


# The synchronous forms of the task-supporting tools, for clients without the extension.


async def slow_compute_now(seconds: float = 0, label: str = "result") -> types.CallToolResult:
    """Task-supporting (optional): sleep ``seconds``, then return a result."""
    return await slow_compute({"seconds": seconds, "label": label}, _no_input)


async def failing_job_now() -> types.CallToolResult:
    """Task-supporting (required): always ends in a tool error."""
    return await failing_job({}, _no_input)


async def protocol_error_job_now() -> types.CallToolResult:
    """Task-supporting (optional): breaks down with a protocol error."""
    return await protocol_error_job({}, _no_input)


async def confirm_delete_now(filename: str = "the file") -> types.CallToolResult:
    """Task-supporting (optional): ask for a confirmation, then delete."""
    return await confirm_delete({"filename": filename}, _no_input)


async def multi_input_now() -> types.CallToolResult:
    """Task-supporting (optional): ask two questions at once."""
    return await multi_input({}, _no_input)


async def tool_with_task_now() -> types.CallToolResult:
    """Task-supporting (required): ask a name, then greet it from a task."""
    return await greeting_job("you")({}, _no_input)


def greet(name: str) -> str:
    """A synchronous tool: no task, whatever the client declared."""
    return f"Hello, {name}!"


SYNC_FORMS: dict[str, Callable[..., Any]] = {
    "slow_compute": slow_compute_now,
    "failing_job": failing_job_now,
    "protocol_error_job": protocol_error_job_now,
    "confirm_delete": confirm_delete_now,
    "multi_input": multi_input_now,
    COMPOSED: tool_with_task_now,
    "greet": greet,
}


class TasksExtension(Extension):
    """Serve task-supporting tools as tasks to clients that declared the extension."""

    identifier = TASKS

    def __init__(self) -> None:
        self._tasks: dict[str, _Task] = {}
        self._ids = itertools.count(1)
        self._group: TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Own the task group the tasks run in (enter it in the server's lifespan)."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    def tools(self) -> Sequence[ToolBinding]:
        return [ToolBinding(fn=fn, kwargs={"name": name}) for name, fn in SYNC_FORMS.items()]

    def methods(self) -> Sequence[MethodBinding]:
        return [
            MethodBinding("tasks/get", TaskParams, self._get),
            MethodBinding("tasks/update", TaskUpdateParams, self._update),
            MethodBinding("tasks/cancel", TaskParams, self._cancel),
        ]

    async def intercept_tool_call(
        self, params: types.CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        name = params.name
        if name not in JOBS and name != COMPOSED:
            return await call_next(ctx)
        required = name == COMPOSED or JOBS[name][1] == "required"
        if required:
            require_client_extension(ctx, TASKS)
        elif not _declared(ctx):
            return await call_next(ctx)
        if name == COMPOSED:
            answer = (params.input_responses or {}).get("user_name")
            if not isinstance(answer, types.ElicitResult) or not isinstance((answer.content or {}).get("name"), str):
                return types.InputRequiredResult(
                    input_requests={"user_name": _elicit("What is your name?", {"name": {"type": "string"}})}
                )
            return self._start(greeting_job(str((answer.content or {})["name"])), {})
        return self._start(JOBS[name][0], params.arguments or {})

    def _start(self, job: Job, arguments: dict[str, Any]) -> dict[str, Any]:
        """Create the task (durably: ``tasks/get`` finds it at once) and run the job in the background."""
        if self._group is None:
            raise MCPError(code=types.INTERNAL_ERROR, message="The tasks extension is not running")
        task = _Task(task_id=f"task-{next(self._ids)}")
        self._tasks[task.task_id] = task
        self._group.start_soon(self._run, task, job, arguments)
        return {"resultType": "task", **task.envelope()}

    async def _run(self, task: _Task, job: Job, arguments: dict[str, Any]) -> None:
        with task.scope:
            try:
                result = await job(arguments, task.ask)
            except MCPError as error:
                task.error = error.error.model_dump(by_alias=True, mode="json", exclude_none=True)
                task.settle("failed")
            else:
                task.result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
                task.result.pop("resultType", None)
                task.settle("completed")
        if task.scope.cancelled_caught:
            task.settle("cancelled")

    def _task(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> _Task:
        require_client_extension(ctx, TASKS)
        task = self._tasks.get(params.task_id)
        if task is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown task {params.task_id!r}")
        return task

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
        task = self._task(ctx, params)
        detail: dict[str, Any] = {"resultType": "complete", **task.envelope()}
        if task.status == "input_required":
            detail["inputRequests"] = {
                key: request.model_dump(by_alias=True, mode="json", exclude_none=True)
                for key, request in task.pending.items()
            }
        if task.result is not None:
            detail["result"] = task.result
        if task.error is not None:
            detail["error"] = task.error
        return detail

    async def _update(self, ctx: ServerRequestContext[Any, Any], params: TaskUpdateParams) -> dict[str, Any]:
        task = self._task(ctx, params)
        for key, answer in params.input_responses.items():
            if key in task.pending:  # answers to requests the task did not make are ignored
                del task.pending[key]
                task.answers[key] = answer
        if task.status == "input_required" and not task.pending:
            task.answered.set()
        return {"resultType": "complete"}

    async def _cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
        task = self._task(ctx, params)
        if task.status not in ("completed", "failed", "cancelled"):
            task.scope.cancel()
        return {"resultType": "complete"}


def _declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    try:
        require_client_extension(ctx, TASKS)
    except MCPError:
        return False
    return True


class TaskNameHeaderCheck:
    """Refuse a ``tasks/*`` request whose ``Mcp-Name`` header is not its ``taskId`` (HTTP 400, ``-32020``).

    The SDK checks ``Mcp-Name`` for the methods of the core protocol only
    (``tools/call``, ``resources/read``, ``prompts/get``); the Tasks extension
    adds its three methods to that rule, so its HTTP side is checked here,
    before the SDK reads the body.
    """

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        request = Request(scope, receive)
        body = await request.body()
        mismatch = _task_name_mismatch(body, request.headers.get(MCP_NAME_HEADER))
        if mismatch is not None:
            await mismatch(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self._app(scope, replay, send)


def _task_name_mismatch(body: bytes, header: str | None) -> JSONResponse | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") not in ("tasks/get", "tasks/update", "tasks/cancel"):
        return None
    params = message.get("params")
    task_id = params.get("taskId") if isinstance(params, dict) else None
    if task_id is None or decode_header_value(header) == task_id:
        return None
    error = {"code": types.HEADER_MISMATCH, "message": f"{MCP_NAME_HEADER} header does not match the body's taskId"}
    return JSONResponse({"jsonrpc": "2.0", "id": message.get("id"), "error": error}, status_code=400)
