"""A stdio MCP server with one call that waits for a file and declares no hints: not safe to run twice."""

from __future__ import annotations

import os

import anyio
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("blocking", version="0.1.0", log_level="WARNING")


@mcp.tool()
async def hold(path: str) -> str:
    """Write ``<path>.running``, wait until the file at ``path`` exists, then answer with its text."""
    with open(f"{path}.running", "w", encoding="utf-8") as handle:
        handle.write("running")
    while not os.path.exists(path):
        await anyio.sleep(0.02)
    with open(path, encoding="utf-8") as handle:
        return handle.read()


if __name__ == "__main__":
    mcp.run()
