"""The stdio transport: a server child in its own process group, read with a size limit, ended as a group.

Written here rather than taken from the SDK's ``stdio_client`` for three
reasons the SDK gives no hook for: it keeps the child process to itself, so
nothing could end the helpers a server leaves behind (the SDK kills the
process group only when the server itself outlives its grace period; a server
that exits when its stdin closes leaves its helpers running); it reads a
line by joining its whole buffer again for every chunk (quadratic in the size
of an answer) with no bound on the size; and one message that cannot be
encoded (a lone surrogate in the arguments) ends its writer task and with it
the connection. JSON-RPC stays the SDK's: messages are parsed by its adapter
(see ``_framing``) and serialised by its models.

Shutdown follows the MCP spec, as the SDK's does: close the child's stdin,
give it a grace period to exit, then SIGTERM and, after another grace period,
SIGKILL its whole process group. The group is signalled even when the server
exited by itself, which is what ends its helpers. The same happens when the
server exits (or crashes) on its own while connected: a helper that inherited
its stdout would otherwise keep the pipe open, and the crash would go unseen.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import TextIO

import anyio
import anyio.lowlevel
import mcp.types as types
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import StdioServerParameters, stdio_client
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from pydantic_core import PydanticSerializationError

from ._endpoint import StdioEndpoint
from ._framing import Frame, LineFramer
from ._substitutes import not_sent_error

__all__ = ["stdio_transport"]

logger = logging.getLogger("toolsift.mcp_sessions")

# Seconds the server gets to exit by itself once its stdin is closed (the SDK's figure).
EXIT_GRACE_SECONDS = 2.0
# Seconds between SIGTERM and SIGKILL to the process group.
KILL_GRACE_SECONDS = 2.0
# Seconds the writer gets to flush messages already accepted before stdin closes.
_FLUSH_SECONDS = 0.5
_POLL_SECONDS = 0.01
# How often a running server is checked for having exited where no pidfd tells it (not Linux). Not
# process.wait(): on Python 3.11 it also waits for the pipes to close, which a helper holding them delays.
_EXIT_CHECK_SECONDS = 0.1

Streams = tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]


@asynccontextmanager
async def stdio_transport(
    endpoint: StdioEndpoint, errlog: TextIO, *, server: str, max_message_bytes: int
) -> AsyncIterator[Streams]:
    """Spawn the server of ``endpoint`` and yield the streams the SDK ``Client`` talks over.

    On Windows this is the SDK's ``stdio_client`` (Job Objects end the child's
    tree there), without the size limit.

    Raises:
        OSError: The command cannot be spawned (``FileNotFoundError`` when it does not exist).
    """
    if sys.platform == "win32":  # pragma: no cover - toolsift's tests run on POSIX
        params = StdioServerParameters(
            command=endpoint.command, args=list(endpoint.args), env=dict(endpoint.env), cwd=endpoint.cwd
        )
        async with stdio_client(params, errlog=errlog) as streams:
            yield streams
        return
    process = await anyio.open_process(
        [endpoint.command, *endpoint.args],
        env=dict(endpoint.env),
        cwd=endpoint.cwd,
        stderr=errlog,
        start_new_session=True,
    )
    to_client, from_server = anyio.create_memory_object_stream[Frame](0)
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage](0)
    reader_done, writer_done = anyio.Event(), anyio.Event()
    async with anyio.create_task_group() as pipes:
        pipes.start_soon(_read, process, to_client, LineFramer(server, max_message_bytes), reader_done)
        pipes.start_soon(_write, process, from_client, to_client, writer_done, server)
        pipes.start_soon(_end_group_after_leader, process)
        try:
            yield from_server, to_server
        finally:
            # Bounded throughout, and shielded: a cancelled caller must not leave a live server behind.
            with anyio.CancelScope(shield=True):
                from_server.close()  # the reader now drains stdout, so a server blocked writing can exit
                to_server.close()
                with anyio.move_on_after(_FLUSH_SECONDS):
                    await writer_done.wait()
                await _stop(process)
                with anyio.move_on_after(KILL_GRACE_SECONDS):
                    # Once the group is gone stdout ends, and asyncio closes the pipe itself.
                    await reader_done.wait()
            pipes.cancel_scope.cancel()


async def _read(
    process: Process, to_client: MemoryObjectSendStream[Frame], framer: LineFramer, done: anyio.Event
) -> None:
    assert process.stdout is not None
    try:
        async with to_client:
            async for chunk in process.stdout:
                frames = framer.feed(chunk)
                for frame in frames:
                    await to_client.send(frame)
                if not frames:
                    # A long message arrives in many chunks; let other servers' calls run in between.
                    await anyio.lowlevel.checkpoint()
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # the client side is gone: only draining is left
    # Keep reading until the child and its group let go of stdout, so none of them blocks writing.
    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        async for _ in process.stdout:
            pass
    done.set()


async def _write(
    process: Process,
    from_client: MemoryObjectReceiveStream[SessionMessage],
    to_client: MemoryObjectSendStream[Frame],
    done: anyio.Event,
    server: str,
) -> None:
    assert process.stdin is not None
    try:
        async with from_client:
            async for item in from_client:
                message = item.message
                try:
                    data = (message.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode()
                except (PydanticSerializationError, UnicodeEncodeError) as exc:
                    await _refuse(message, exc, to_client, server)
                    continue
                await process.stdin.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        # The server stopped reading; end the read side too, so calls fail instead of waiting forever.
        await to_client.aclose()
    finally:
        done.set()


async def _refuse(
    message: types.JSONRPCMessage, error: Exception, to_client: MemoryObjectSendStream[Frame], server: str
) -> None:
    """Answer a request that cannot be put on the wire with an error, leaving the connection up."""
    reason = f"cannot be encoded as JSON text ({error})"
    if not isinstance(message, types.JSONRPCRequest):
        logger.warning("A message for MCP server %r was not sent: %s", server, reason)
        return
    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await to_client.send(SessionMessage(not_sent_error(message.id, reason)))


async def _end_group_after_leader(process: Process) -> None:
    """Once the server has exited, end what it left in its group, so that its stdout ends and the loss is seen."""
    await _exited(process)
    await terminate_posix_process_tree(process, KILL_GRACE_SECONDS)


async def _exited(process: Process) -> None:
    """Return once the server process has exited, whatever became of its pipes.

    On Linux a pidfd becomes readable when the process exits: an event, with
    no timer that runs for as long as the server does (a timer that wakes
    periodically never lets ``anyio.wait_all_tasks_blocked`` see every task
    blocked). Elsewhere the exit is looked for now and then.
    """
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):  # not Linux 5.3+, or the process is already gone
        while process.returncode is None:
            await anyio.sleep(_EXIT_CHECK_SECONDS)
        return
    try:
        await anyio.wait_readable(pidfd)
    finally:
        os.close(pidfd)


async def _stop(process: Process) -> None:
    """Close stdin, wait for the server, then end its whole process group."""
    assert process.stdin is not None and process.stdout is not None
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    with anyio.move_on_after(EXIT_GRACE_SECONDS):
        # Not process.wait(): it also waits for stdout to close, which a helper holding it delays.
        while process.returncode is None:
            await anyio.sleep(_POLL_SECONDS)
    # The group id is the leader's pid (start_new_session); SIGTERM, then SIGKILL after the grace period.
    await terminate_posix_process_tree(process, KILL_GRACE_SECONDS)
    with anyio.move_on_after(KILL_GRACE_SECONDS):
        while process.returncode is None:
            await anyio.sleep(_POLL_SECONDS)
    if process.returncode is None:
        logger.warning("MCP server process %d is still alive after SIGKILL; leaving it", process.pid)
