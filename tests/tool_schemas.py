"""The input schemas of real servers' tools, listed once per process for tests that generate arguments from them.

Listing happens on first use, not when a test module is imported: every xdist worker imports every
module to collect it, and only the worker that runs these tests should pay for the servers.
"""

from __future__ import annotations

import functools
from typing import Any

import anyio
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp_helpers import example_server, in_memory, stdio_server
from servers import example_module

from toolsift.config import ServerConfig
from toolsift.mcp_sessions import McpSession, SessionOptions

Schemas = tuple[tuple[str, dict[str, Any]], ...]


def _example(stem: str) -> Server[Any] | MCPServer:
    """``examples/servers/<stem>.py``'s server object (flow builds a fresh one; the others are module-level)."""
    return example_module("flow.py").build_server() if stem == "flow" else example_server(f"{stem}.py")


async def _listed(config: ServerConfig, options: SessionOptions | None) -> Schemas:
    async with McpSession(config, options=options) as session:
        return tuple((f"{config.name}__{tool.name}", dict(tool.input_schema)) for tool in session.catalog.tools)


@functools.cache
def example_schemas(stem: str) -> Schemas:
    """(``server__tool``, input schema) of each tool of ``examples/servers/<stem>.py``, reached in this process.

    The session is a real client session over memory streams: the schemas are what a stdio client lists.
    """
    config = stdio_server(stem, f"{stem}.py", protocol="legacy")
    return anyio.run(_listed, config, in_memory({stem: _example(stem)}))


def process_schemas(config: ServerConfig) -> Schemas:
    """(``server__tool``, input schema) of each tool of the server ``config`` starts as a child process."""
    return anyio.run(_listed, config, None)
