"""A large orchestration MCP server in the style of claude-flow: 214 tools in twelve groups.

It stands for the kind of server whose schemas would flood a model's context
if they were all shown at once: memory, swarm, agent, task, coordination,
workflow, session, hooks, system, neural, github and performance tools, each
with a specific description and a realistic input schema (enums, defaults,
nested objects, ``format: uri``, a few ``$defs``/``$ref``).

Behaviour is simple and deterministic. The memory tools keep a real key/value
store in the process; every other tool answers with a JSON status that echoes
its arguments, and the tools that create something (``swarm_init``,
``agent_spawn``, ``task_create``, ...) return an id derived from their
arguments that the other tools of the group accept. Arguments are validated
against the schema; bad arguments give an ``isError`` result.

Run it::

    python examples/servers/flow.py [--page-size N]           # stdio
    python examples/servers/flow.py --http [--port N] [--ready-file PATH] [--page-size N]

``--page-size N`` pages ``tools/list`` N tools at a time (default 0: one page).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from typing import Any

import anyio
import mcp.types as types
from _flow import CATALOG, MemoryStore, ToolDef
from _http import add_http_arguments, serve_http
from _lowlevel import ToolHandler, ToolTable, text_result
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

# Tools that create something, and the kind of id they hand out.
CREATES = {
    "swarm_init": "swarm",
    "agent_spawn": "agent",
    "agent_clone": "agent",
    "task_create": "task",
    "task_orchestrate": "task",
    "workflow_create": "workflow",
    "workflow_template": "workflow",
    "session_start": "session",
    "session_fork": "session",
}


def _reply(payload: dict[str, Any]) -> types.CallToolResult:
    return text_result(json.dumps(payload, sort_keys=True))


def status_handler(entry: ToolDef) -> ToolHandler:
    """A handler that acknowledges the call with a JSON status echoing the arguments."""
    name = entry.tool.name

    async def handle(ctx: ServerRequestContext[Any], args: dict[str, Any]) -> types.CallToolResult:
        digest = hashlib.sha256(json.dumps([name, args], sort_keys=True).encode()).hexdigest()[:12]
        payload: dict[str, Any] = {"tool": name, "group": entry.group, "status": "ok", "arguments": args}
        if name in CREATES:
            payload[f"{CREATES[name]}_id"] = f"{CREATES[name]}-{digest}"
        return _reply(payload)

    return handle


def memory_handler(function: Any) -> ToolHandler:
    """Wrap one method of the memory store as a tool handler."""

    async def handle(ctx: ServerRequestContext[Any], args: dict[str, Any]) -> types.CallToolResult:
        return _reply(function(args))

    return handle


def build_server(page_size: int = 0) -> Server[Any]:
    """The flow server: every tool of the catalog, memory tools backed by a fresh store."""
    table = ToolTable(page_size=page_size)
    memory = MemoryStore().handlers()
    for entry in CATALOG:
        name = entry.tool.name
        table.add(entry.tool, memory_handler(memory[name]) if name in memory else status_handler(entry))
    return table.server(
        "flow",
        version="2.0.0",
        instructions="Swarm orchestration: memory, agents, tasks, workflows, sessions, hooks and platform tools.",
    )


async def serve_stdio(page_size: int) -> None:
    server = build_server(page_size)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser(description="A claude-flow style orchestration server with 200+ tools.")
    parser.add_argument("--page-size", type=int, default=0, help="tools per tools/list page (0: all at once)")
    add_http_arguments(parser)
    args = parser.parse_args()
    if args.page_size < 0:
        parser.error(f"--page-size must be 0 or more, got {args.page_size}")
    if args.http:
        serve_http(build_server(args.page_size).streamable_http_app(), port=args.port, ready_file=args.ready_file)
    else:
        anyio.run(serve_stdio, args.page_size)


if __name__ == "__main__":
    main()
