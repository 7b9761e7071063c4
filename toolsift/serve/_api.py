"""The entry points of ``toolsift serve``: build a server, serve stdio, run from arguments."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskStatus

from .._exceptions import ConfigError, ToolsiftError
from .._files import write_atomically
from ..config import ToolsiftConfig, TrustedLaunches
from ..config._internal import ServeSettings, validate_serve_settings
from ._http import run_http_workers, serve_http
from ._load import load_serve_config
from ._server import ToolsiftServer

__all__ = ["build_server", "main", "serve_stdio"]


def build_server(
    config: ToolsiftConfig | str | os.PathLike[str],
    settings: ServeSettings | None = None,
    *,
    trust: TrustedLaunches | None = None,
    settle_heap: bool = False,
    **overrides: Any,
) -> ToolsiftServer:
    """A server for a config, not started yet.

    Args:
        config: A loaded config, or the path of a config file (whose ``serve``
            section gives the settings unless ``settings`` is passed).
        settings: How to serve.
        trust: What a project's config may launch as a gateway (see ``ToolsiftServer``).
        settle_heap: Freeze the process's heap after large registrations (see ``ToolsiftServer``).
        overrides: ``ServeSettings`` fields to change (``port=0``, ``transport="http"``).

    Raises:
        ConfigError: When the config, the settings or an override is invalid.
    """
    if not isinstance(config, ToolsiftConfig):
        config, loaded = load_serve_config(config)
        settings = settings if settings is not None else loaded
    settings = settings if settings is not None else ServeSettings()
    if overrides:
        settings = validate_serve_settings({**settings.model_dump(exclude_unset=True), **overrides})
    return ToolsiftServer(config, settings, trust=trust, settle_heap=settle_heap)


async def serve_stdio(server: ToolsiftServer) -> None:
    """Start ``server`` and serve one client on stdin/stdout until it disconnects.

    If cancelled, the connection and the server are closed.

    Raises:
        ConfigError: When the settings share sessions, which only HTTP serves.
    """
    server.check_stdio()
    async with server:
        await server.run_stdio()


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="toolsift serve", description=__doc__.splitlines()[0])
    # Named, never looked for: a file found in the current folder came with the project, and only the
    # toolsift command, which asks for trust first, picks one up by itself.
    parser.add_argument("--config", type=Path, required=True, help="the config file")
    parser.add_argument("--transport", choices=["stdio", "http"])
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    parser.add_argument("--stateless", action="store_true", default=None)
    parser.add_argument("--json-response", action="store_true", default=None)
    parser.add_argument("--workers", type=int)
    parser.add_argument("--profile")
    gateway = parser.add_mutually_exclusive_group()
    gateway.add_argument("--gateway", action="store_true", default=None, help="also serve configured MCP tools")
    gateway.add_argument("--gateway-skill", help="serve the MCP tools this skill's allowed-tools name")
    parser.add_argument("--ready-file", type=Path, help="HTTP: write the URL here once serving")
    parser.add_argument("--redis", help="HTTP: share sessions with other replicas through this Redis URL")
    parser.add_argument("--replica", help="this replica's name in Redis (default: host-pid)")
    return parser.parse_args(argv)


class _Announce(TaskStatus[str]):
    """Receives ``serve_http``'s URL when it is serving, and tells whoever started the process."""

    def __init__(self, ready_file: Path | None) -> None:
        self._ready_file = ready_file

    def started(self, value: str | None = None) -> None:
        print(f"READY {value}", file=sys.stderr, flush=True)
        if self._ready_file is not None:
            # Written whole and renamed, so a reader never sees half a URL.
            write_atomically(self._ready_file, f"{value}\n", what="the ready file")


def main(
    argv: Sequence[str] | None = None, *, config: ToolsiftConfig | None = None, trust: TrustedLaunches | None = None
) -> int:
    """Run ``toolsift serve`` from command-line arguments; returns the exit status.

    Args:
        argv: The arguments (``sys.argv[1:]`` by default).
        config: The config of ``--config`` already loaded and admitted, so
            that what is served is what was trusted; read from the file when None.
        trust: What a project's config may launch as a gateway (see ``ToolsiftServer``).
    """
    args = _arguments(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    overrides = {
        key: value
        for key, value in {
            "transport": args.transport,
            "host": args.host,
            "port": args.port,
            "stateless": args.stateless,
            "json_response": args.json_response,
            "workers": args.workers,
            "profile": args.profile,
            "gateway": args.gateway_skill or args.gateway,
        }.items()
        if value is not None
    }
    shared = {key: value for key, value in {"redis": args.redis, "replica": args.replica}.items() if value is not None}
    try:
        config, settings = load_serve_config(args.config) if config is None else (config, config.serve)
        if shared:
            current = settings.shared.model_dump(exclude_unset=True) if settings.shared is not None else {}
            overrides["shared"] = {**current, **shared}
        # This process serves and nothing else: its heap is toolsift's to settle.
        server = build_server(config, settings, trust=trust, settle_heap=True, **overrides)
        settings = server.settings
        if settings.transport == "stdio":
            anyio.run(serve_stdio, server)
        elif settings.workers > 1:
            run_http_workers(args.config, settings, announce=_Announce(args.ready_file).started, trust=trust)
        else:
            anyio.run(partial(serve_http, server, task_status=_Announce(args.ready_file)))
    except ToolsiftError as exc:
        print(f"error: {exc}", file=sys.stderr)
        # The toolsift command's exit codes: 4 for configuration errors, 1 for the rest.
        return 4 if isinstance(exc, ConfigError) else 1
    except KeyboardInterrupt:
        return 0
    return 0
