"""A sandboxed program's life: started under bubblewrap, and on exit killed with everything it started.

Killing ``bwrap`` alone does not end the sandbox: its ``--die-with-parent``
relies on a parent-death signal that the kernel drops when the sandbox's user
namespace changes credentials, so the sandbox's init (the first process in its
PID namespace) can outlive ``bwrap`` and keep the program running. The sandbox
is ended by killing that init, after which the kernel kills every process in
its namespace. bwrap names the init's host PID on ``--info-fd``; it is held as
a pidfd, taken while ``bwrap`` (its parent) is alive, so a later kill cannot
reach another process that reused the PID.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Sequence

import anyio
from anyio.abc import Process

from ._sandbox import Sandbox

__all__ = ["sandboxed_process"]

# Hang guard for bwrap to name its sandbox, which it does right after creating it (milliseconds).
_INFO_TIMEOUT = 60.0


@contextlib.asynccontextmanager
async def sandboxed_process(sandbox: Sandbox, argv: Sequence[str]) -> AsyncIterator[Process]:
    """Run ``argv`` in ``sandbox`` with piped stdout and stderr; on exit (also on cancellation) end the sandbox.

    Raises:
        SandboxUnavailable: When bubblewrap cannot make the sandbox here.
        OSError: When bwrap cannot be started.
    """
    read_end, write_end = os.pipe()
    init: int | None = None
    # The command's placeholders are held until the sandbox and everything in it are gone.
    async with sandbox.command(argv, info_fd=write_end) as command:
        try:
            # Shielded: a call cancelled while the sandbox starts would otherwise leave it running, unseen.
            with anyio.CancelScope(shield=True):
                process = await anyio.open_process(
                    command,
                    env={},
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                    pass_fds=(write_end,),
                )
                os.close(write_end)
                write_end = -1
                init = await _sandbox_init(read_end, process)
        finally:
            for fd in (read_end, write_end):
                if fd >= 0:
                    os.close(fd)
        try:
            yield process
        finally:
            with anyio.CancelScope(shield=True):
                await _end(process, init)
                await process.aclose()


async def _sandbox_init(info: int, process: Process) -> int | None:
    """A pidfd of the sandbox's init, as bwrap names it, or None when bwrap made none (it failed)."""
    with anyio.move_on_after(_INFO_TIMEOUT):
        data = await anyio.to_thread.run_sync(_read_all, info)
        with contextlib.suppress(ValueError, TypeError, KeyError):
            pid = int(json.loads(data)["child-pid"])
            pidfd = os.pidfd_open(pid)
            # The PID is bwrap's child only while bwrap (unreaped, so its PID is not reused) is its parent.
            if process.returncode is None and _parent(pid) == process.pid:
                return pidfd
            os.close(pidfd)
    return None


def _read_all(fd: int) -> bytes:
    data = b""
    while chunk := os.read(fd, 4096):
        data += chunk
    return data


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return int(stat.read().rpartition(")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return None


async def _end(process: Process, init: int | None) -> None:
    """Kill the sandbox's init and bwrap, if still running, and wait until the init is gone.

    The kernel kills the whole PID namespace with its init, and the init's exit
    completes only once every other process in it is gone: its pidfd turns
    readable then, and nothing of the sandbox runs any more.
    """
    if init is not None:
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(init, signal.SIGKILL)
        with anyio.move_on_after(_INFO_TIMEOUT):
            await anyio.wait_readable(init)
        os.close(init)
    # Only while bwrap is unreaped: once reaped, its PID may already belong to another process.
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
