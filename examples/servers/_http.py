"""Streamable HTTP serving for the example servers, with a readiness signal.

Every example that speaks HTTP binds 127.0.0.1 only and announces that it is
ready the same way, so one test helper can start any of them:

1. The listening socket is bound *before* the server starts (``--port 0``, the
   default, lets the OS pick a free port), so there is no window in which a
   port was chosen but somebody else took it.
2. Once uvicorn has run the app's lifespan (the MCP session manager is up) and
   accepts connections, the server prints ``READY http://127.0.0.1:PORT/mcp``
   on stderr and, with ``--ready-file PATH``, writes that URL to PATH. The file
   is written under a temporary name and renamed, so a reader never sees a
   half-written URL.

:func:`run_stdio_or_http` is the whole ``main`` of a server without options
of its own. Flags added by :func:`add_http_arguments`: ``--http`` (serve HTTP instead of
stdio), ``--port N`` (default 0 = a free port), ``--ready-file PATH``.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp

HOST = "127.0.0.1"
MCP_PATH = "/mcp"


def add_http_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--http``, ``--port`` and ``--ready-file`` to ``parser``."""
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP on 127.0.0.1 instead of stdio")
    parser.add_argument("--port", type=int, default=0, help="TCP port; 0 (default) picks a free one")
    parser.add_argument("--ready-file", type=Path, default=None, help="write the server URL here once listening")


class _AnnouncingServer(uvicorn.Server):
    """A uvicorn server that announces its URL once it really accepts connections."""

    def __init__(self, config: uvicorn.Config, url: str, ready_file: Path | None) -> None:
        super().__init__(config)
        self._url = url
        self._ready_file = ready_file

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if not self.started:
            return
        print(f"READY {self._url}", file=sys.stderr, flush=True)
        if self._ready_file is not None:
            # Rename makes the write atomic: a poller sees no file or the whole URL.
            tmp = self._ready_file.with_name(self._ready_file.name + ".tmp")
            await anyio.Path(tmp).write_text(self._url + "\n")
            os.replace(tmp, self._ready_file)


def bind_loopback(port: int = 0) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: a free one), for servers that must know their URL first."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(128)
    return sock


def serve_http(
    app: ASGIApp, *, port: int = 0, ready_file: Path | None = None, sock: socket.socket | None = None
) -> None:
    """Serve ``app`` on 127.0.0.1 until SIGINT/SIGTERM, announcing readiness.

    Args:
        app: the Starlette app of an MCP server (``streamable_http_app()``).
        port: TCP port to bind; 0 picks a free one.
        ready_file: where to write the URL once the server accepts connections.
        sock: a socket :func:`bind_loopback` bound already (``port`` is then ignored).
    """
    sock = sock if sock is not None else bind_loopback(port)
    url = f"http://{HOST}:{sock.getsockname()[1]}{MCP_PATH}"
    # A short graceful timeout: open SSE streams would otherwise hold shutdown forever.
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1, lifespan="on")
    _AnnouncingServer(config, url, ready_file).run(sockets=[sock])


def run_stdio_or_http(server: MCPServer, description: str) -> None:
    """The ``main`` of a server that needs no options of its own: stdio, or ``--http`` with readiness."""
    parser = argparse.ArgumentParser(description=description)
    add_http_arguments(parser)
    args = parser.parse_args()
    if args.http:
        serve_http(server.streamable_http_app(), port=args.port, ready_file=args.ready_file)
    else:
        server.run("stdio")
