"""Start the example MCP servers of ``examples/servers/`` from tests.

Stdio servers are started by the SDK client itself from :func:`stdio_params`.
HTTP servers run as subprocesses on a free port of 127.0.0.1 through
:func:`http_server`, which relies on the readiness protocol of
``examples/servers/_http.py``: the server writes its URL to ``--ready-file``
once it accepts connections.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc
from mcp import StdioServerParameters

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "servers"
START_TIMEOUT = 30.0
STOP_TIMEOUT = 5.0
POLL_INTERVAL = 0.02


def stdio_params(name: str, *args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    """Parameters that start ``examples/servers/<name>`` over stdio with this interpreter."""
    return StdioServerParameters(command=sys.executable, args=[str(EXAMPLES / name), *args], env=env)


async def wait_for_file(path: Path, *, timeout: float, process: anyio.abc.Process | None = None) -> str:
    """Poll until ``path`` exists with content and return that content.

    Servers announce things by writing files (readiness, cancellation markers);
    another process gives no event to wait on, so this polls with a deadline.

    Raises:
        TimeoutError: the file did not appear in time.
        RuntimeError: ``process`` exited before the file appeared.
    """
    with anyio.move_on_after(timeout):
        while True:
            if path.exists() and (text := path.read_text(encoding="utf-8")):
                return text
            if process is not None and process.returncode is not None:
                raise RuntimeError(f"process exited with code {process.returncode} before writing {path}")
            await anyio.sleep(POLL_INTERVAL)
    raise TimeoutError(f"{path} did not appear within {timeout}s")


async def stop_process(process: anyio.abc.Process) -> None:
    """Terminate, then kill if it lingers; always reap, even when the caller is cancelled."""
    with anyio.CancelScope(shield=True):
        if process.returncode is None:
            process.terminate()
            with anyio.move_on_after(STOP_TIMEOUT):
                await process.wait()
        if process.returncode is None:
            process.kill()
        await process.aclose()


@asynccontextmanager
async def http_server(script: str = "notes_http.py", *args: str) -> AsyncIterator[str]:
    """Run ``examples/servers/<script> --http`` on a free port of 127.0.0.1 and yield its MCP URL.

    Extra ``args`` go to the script. The server's stderr is kept in a file and
    quoted when it fails to start.

    Raises:
        RuntimeError: the server exited before it was ready.
        TimeoutError: it did not become ready within START_TIMEOUT seconds.
    """
    with tempfile.TemporaryDirectory(prefix="toolsift-http-") as tmp:
        ready, log = Path(tmp) / "ready", Path(tmp) / "stderr.log"
        command = [sys.executable, str(EXAMPLES / script), "--http", "--port", "0", "--ready-file", str(ready), *args]
        with log.open("wb") as stderr:
            process = await anyio.open_process(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                               stderr=stderr)
        try:
            try:
                url = (await wait_for_file(ready, timeout=START_TIMEOUT, process=process)).strip()
            except (RuntimeError, TimeoutError) as exc:
                tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
                raise type(exc)(f"{script} {' '.join(args)}: {exc}; stderr:\n{tail}") from None
            yield url
        finally:
            await stop_process(process)
