"""A stdio MCP server that tells which process started it: a gateway's worker, in the ``--workers`` tests."""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("worker", version="0.1.0", log_level="WARNING")


@mcp.tool()
def parent() -> str:
    """The process id of the process that started this server."""
    return str(os.getppid())


if __name__ == "__main__":
    mcp.run()
