"""A stdio MCP server for session tests: tools that need the client, and one that ends the process.

``roots`` and ``ask`` use the SDK's resolvers, which work in both protocol eras
(a mid-call request on handshake-era connections, an ``InputRequiredResult``
on 2026-07-28 ones). ``exit_soon`` answers, then exits the process a moment
later, so a client sees a server die while no call is waiting. The ``leak_*``
tools repeat an environment variable of the server in each place an answer
has room for text: result text, an ``isError`` message, structured content
and a JSON-RPC error message.
"""

from __future__ import annotations

import os
import threading
from typing import Annotated

import mcp.types as types
from mcp import MCPError
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
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


@mcp.tool()
def leak_text(name: str) -> str:
    """The variable's value as result text."""
    return f"the value is {os.environ.get(name, '')}"


@mcp.tool()
def leak_error(name: str) -> str:
    """An isError result quoting the variable."""
    raise ToolError(f"login failed with {os.environ.get(name, '')}")


@mcp.tool()
def leak_structured(name: str) -> dict[str, str]:
    """The variable as structured content {"value": ...} (and its JSON text)."""
    return {"value": os.environ.get(name, "")}


@mcp.tool()
def leak_rpc_error(name: str) -> str:
    """A JSON-RPC error quoting the variable."""
    raise MCPError(types.INVALID_PARAMS, f"token {os.environ.get(name, '')} was refused")


if __name__ == "__main__":
    mcp.run("stdio")
