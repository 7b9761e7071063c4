"""Task-augmented tool calls (MCP 2025-11-25): create the task, follow it, fetch its result, cancel it.

A tool whose ``execution.taskSupport`` is ``required`` answers a plain
``tools/call`` with -32601; it runs only as a task. The call then asks
``tools/call`` with ``task: {ttl}`` and gets a ``CreateTaskResult`` back at
once. ``tasks/result`` waits for the outcome (the server also delivers
requests it makes of the client, such as elicitation, while it waits), and
beside it ``tasks/get`` is asked every ``pollInterval`` so that each new
status message reaches the caller as progress. A caller that gives up sends
``tasks/cancel``.

The SDK validates every ``tools/call`` answer as a ``CallToolResult``, so the
creating request goes through the session's raw request path (``send_as_client``,
the session's own capabilities kept); the other three are ordinary typed requests.
"""

from __future__ import annotations

import math
from typing import Any

import anyio
import mcp.types as types
from mcp import Client, MCPError

from ..registry._internal import ProgressCallback
from ._as_client import send_as_client

__all__ = ["call_as_task", "runs_as_task"]

# Polling bounds, in seconds: a server's pollInterval is followed within them.
_POLL_MIN, _POLL_MAX = 0.05, 5.0
# How long a task outlives a call with no time limit, in milliseconds.
_UNLIMITED_TTL_MS = 3_600_000
# Read timeout of the task's own requests: the caller's deadline ends the call, not the SDK's default.
_UNTIL_DONE = math.inf
# Seconds given to tasks/cancel when the caller has gone.
_CANCEL_WITHIN = 5.0


def runs_as_task(support: str | None, mode: str) -> bool:
    """Whether a tool with ``execution.taskSupport`` ``support`` is called as a task under the server's ``tasks``.

    Only handshake-era listings carry ``execution.taskSupport`` (2026-07-28 moved tasks to an extension).
    """
    return support == "required" or (support == "optional" and mode == "when-supported")


async def call_as_task(
    client: Client,
    name: str,
    arguments: dict[str, Any] | None,
    *,
    seconds: float | None,
    progress: ProgressCallback | None,
) -> types.CallToolResult:
    """Run one tool call as a task within ``seconds`` (None: no limit) and return the tool's result.

    The server keeps the task as long as the call may take (an hour without a limit); at the
    deadline the task is cancelled and the call fails as a request that timed out.

    Raises:
        MCPError: The server refused a request, or the deadline passed (``REQUEST_TIMEOUT``).
    """
    with anyio.fail_after(seconds if seconds is not None else math.inf) as deadline:
        try:
            return await _run_task(client, name, arguments, ttl=seconds, progress=progress)
        except anyio.get_cancelled_exc_class():
            if deadline.cancel_called:
                raise MCPError(types.REQUEST_TIMEOUT, "the task did not finish in time") from None
            raise


async def _run_task(
    client: Client, name: str, arguments: dict[str, Any] | None, *, ttl: float | None, progress: ProgressCallback | None
) -> types.CallToolResult:
    """Create the task, follow it, and fetch its result; the requests wait as long as the task runs."""
    ttl_ms = _UNLIMITED_TTL_MS if ttl is None or math.isinf(ttl) else max(int(ttl * 1000), 1_000)
    params = types.CallToolRequestParams(name=name, arguments=arguments, task=types.TaskMetadata(ttl=ttl_ms))
    # Sent raw: the SDK validates every tools/call answer as a CallToolResult, and knows no CreateTaskResult.
    created = await send_as_client(
        client, "tools/call", params.model_dump(by_alias=True, mode="json", exclude_none=True), None
    )
    task = types.CreateTaskResult.model_validate(created).task
    finished = False
    try:
        async with anyio.create_task_group() as group:
            if progress is not None:
                group.start_soon(_follow, client, task, progress)
            result = await client.session.send_request(
                types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task.task_id)),
                types.CallToolResult,
                request_read_timeout_seconds=_UNTIL_DONE,
            )
            finished = True
            group.cancel_scope.cancel()
        return result
    finally:
        if not finished:
            await _cancel(client, task.task_id)


async def _follow(client: Client, task: types.Task, progress: ProgressCallback) -> None:
    """Report each new status message of ``task`` as progress until it ends."""
    seen, message, status = 0, None, task
    while True:
        if status.status_message and status.status_message != message:
            message, seen = status.status_message, seen + 1
            await progress(seen, None, message)
        if status.status in ("completed", "failed", "cancelled"):
            return
        await anyio.sleep(min(max((status.poll_interval or 1000) / 1000, _POLL_MIN), _POLL_MAX))
        status = await client.session.send_request(
            types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task.task_id)), types.GetTaskResult
        )


async def _cancel(client: Client, task_id: str) -> None:
    """Tell the server to stop the task; the caller has gone, so failures here are not its business."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_WITHIN):
        try:
            await client.session.send_request(
                types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id)), types.CancelTaskResult
            )
        except Exception:  # the call already ended: a refused cancel changes nothing for it
            return
