"""A stdio MCP server for session tests: tools that need the client, and one that ends the process.

``roots`` and ``ask`` use the SDK's resolvers, which work in both protocol eras
(a mid-call request on handshake-era connections, an ``InputRequiredResult``
on 2026-07-28 ones). ``exit_soon`` answers, then exits the process a moment
later, so a client sees a server die while no call is waiting.
"""

from __future__ import annotations

import os
import threading
from typing import Annotated

import mcp.types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import ListRoots, Resolve, Sample

mcp = MCPServer("session-test", version="0.1.0", log_level="WARNING")


def _ask_roots() -> ListRoots:
    return ListRoots()


def _ask_model(question: str) -> Sample:
    message = types.SamplingMessage(role="user", content=types.TextContent(text=question))
    return Sample([message], max_tokens=50)


@mcp.tool()
def roots(result: Annotated[types.ListRootsResult, Resolve(_ask_roots)]) -> str:
    """The client's roots, one "URI name" pair per line."""
    return "\n".join(f"{root.uri} {root.name}" for root in result.roots) or "<no roots>"


@mcp.tool()
def ask(question: str, answer: Annotated[types.CreateMessageResult, Resolve(_ask_model)]) -> str:
    """Ask the client's model a question and return its answer."""
    content = answer.content
    return content.text if isinstance(content, types.TextContent) else repr(content)


@mcp.tool()
def exit_soon() -> str:
    """Answer, then exit the process 0.2 s later."""
    threading.Timer(0.2, os._exit, args=(0,)).start()
    return "bye"


if __name__ == "__main__":
    mcp.run("stdio")
