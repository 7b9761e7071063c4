"""A stdio server runs in its own process group, and closing its session ends the whole group."""

from __future__ import annotations

import os
import signal
from contextlib import suppress
from pathlib import Path

from mcp_helpers import FAST, stdio_server, wait_for_state
from servers import wait_for_file
from waits import poll_until

from toolsift.mcp_sessions import McpSession
from toolsift.mcp_sessions._internal import SessionState


def alive(pid: int) -> bool:
    """Whether ``pid`` runs; a zombie (dead, not yet reaped by whoever adopted it) does not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def wait_gone(pid: int) -> None:
    """Wait until ``pid`` no longer runs; another process gives no event to wait on."""
    await poll_until(lambda: not alive(pid))


async def test_session_close_ends_the_helper_its_server_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "helper.pid"
    config = stdio_server("spawner", "faulty.py", "--spawn-helper", str(pid_file), protocol="legacy")
    helper = 0
    try:
        async with McpSession(config) as session:
            assert session.state is SessionState.READY
            helper = int(await wait_for_file(pid_file))
            assert alive(helper) and os.getpgid(helper) != os.getpgid(0)  # the server's own group, not ours
        await wait_gone(helper)
    finally:
        if helper:
            with suppress(ProcessLookupError):
                os.kill(helper, signal.SIGKILL)


async def test_session_restart_ends_the_helper_of_the_crashed_server(tmp_path: Path) -> None:
    pid_file = tmp_path / "helper.pid"
    config = stdio_server(
        "spawner", "faulty.py", "--spawn-helper", str(pid_file), "--crash-after", "0", protocol="legacy"
    )
    helper = 0
    try:
        async with McpSession(config, options=FAST) as session:
            helper = int(await wait_for_file(pid_file))
            pid_file.unlink()
            assert (await session.call_tool("echo", {"text": "x"})).meta["mcp_failure"] == "crash"
            await wait_gone(helper)
            await wait_for_state(session, SessionState.READY)
            helper = int(await wait_for_file(pid_file))  # the new server's own helper
            assert alive(helper)
        await wait_gone(helper)
    finally:
        if helper:
            with suppress(ProcessLookupError):
                os.kill(helper, signal.SIGKILL)
