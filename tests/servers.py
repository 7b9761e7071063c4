"""Start the example MCP servers of ``examples/servers/`` from tests: as processes, or in this process.

Stdio servers are started by the SDK client itself from :func:`stdio_params`.
HTTP servers run as subprocesses on a free port of 127.0.0.1 through
:func:`http_server`, which relies on the readiness protocol of
``examples/servers/_http.py``: the server writes its URL to ``--ready-file``
once it accepts connections. :func:`example_module` imports a server into
this process instead, for tests of toolsift's own logic run in memory
(``mcp_helpers.in_memory``).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType

import anyio
import anyio.abc
from mcp import StdioServerParameters
from waits import poll_until

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "servers"
STOP_TIMEOUT = 5.0


def stdio_params(name: str, *args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    """Parameters that start ``examples/servers/<name>`` over stdio with this interpreter."""
    return StdioServerParameters(command=sys.executable, args=[str(EXAMPLES / name), *args], env=env)


@functools.cache
def example_module(script: str) -> ModuleType:
    """``examples/servers/<script>`` (or a server at an absolute path) imported into this process, once.

    The module is named ``examples_<stem>``. The examples import their siblings (``_http``, ``_media``) as top-level
    modules, so the folder is on ``sys.path`` while one is imported. Building
    an ``MCPServer`` configures the root logger when it has no handler yet; that
    is undone, so importing a server leaves this process's logging as it was.
    """
    path = EXAMPLES / script
    spec = importlib.util.spec_from_file_location(f"examples_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the tools' annotations through it
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(EXAMPLES))
        root.handlers[:], root.level = handlers, level
    return module


async def wait_for_file(path: Path, *, process: anyio.abc.Process | None = None) -> str:
    """Wait until ``path`` exists with content and return that content.

    Servers announce things by writing files (readiness, cancellation markers);
    another process gives no event to wait on, so this polls, limited only by
    the tests' hang guard.

    Raises:
        RuntimeError: ``process`` exited before the file appeared.
    """

    def written() -> str:
        if path.exists() and (text := path.read_text(encoding="utf-8")):
            return text
        if process is not None and process.returncode is not None:
            raise RuntimeError(f"process exited with code {process.returncode} before writing {path}")
        return ""

    return await poll_until(written)


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
    """
    with tempfile.TemporaryDirectory(prefix="toolsift-http-") as tmp:
        ready, log = Path(tmp) / "ready", Path(tmp) / "stderr.log"
        command = [sys.executable, str(EXAMPLES / script), "--http", "--port", "0", "--ready-file", str(ready), *args]
        with log.open("wb") as stderr:
            process = await anyio.open_process(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr
            )
        try:
            try:
                url = (await wait_for_file(ready, process=process)).strip()
            except RuntimeError as exc:
                tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
                raise type(exc)(f"{script} {' '.join(args)}: {exc}; stderr:\n{tail}") from None
            yield url
        finally:
            await stop_process(process)
