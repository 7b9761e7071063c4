"""A small handshake-era MCP server written with the standard library only, for session edge cases.

It starts in milliseconds (no ``mcp`` import), so many of them can run at once,
and it can misbehave in ways the SDK's own server will not:

    --init-delay X          wait X seconds before answering ``initialize``
    --no-tools              advertise no tools capability at all
    --tools-list-error N    answer ``tools/list`` with JSON-RPC error code N
    --bad-output            ``typed`` returns structured content that breaks its own outputSchema

Tools: ``ping`` (answers "pong"), ``typed`` (declares an outputSchema),
``announce`` (sends tools, resources and prompts list_changed notifications,
then answers), ``crash`` (exits the process without answering) and
``big(size)``, which answers with ``size`` characters of text in two halves
and, between them, waits for the next ``tools/call`` (any tool but ``crash``,
which exits as always, is answered "released" once the big answer is
complete), so a client sees a big answer stall half-way for as long as it
likes; it reports progress once before it starts. One resource and one
prompt are listed. While it waits to answer ``initialize`` it still notices
its stdin closing and exits, as a well-behaved server would.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import sys
import time
from typing import Any

OBJECT = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "ping", "description": "Answer pong.", "inputSchema": OBJECT},
    {
        "name": "typed",
        "description": "Return a number.",
        "inputSchema": OBJECT,
        "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    },
    {"name": "announce", "description": "Announce list changes.", "inputSchema": OBJECT},
    {"name": "crash", "description": "Exit without answering.", "inputSchema": OBJECT},
    {
        "name": "big",
        "description": "Answer with size characters, stalling half-way.",
        "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]},
    },
]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def text(value: str, structured: dict[str, Any] | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": value}]}
    if structured is not None:
        result["structuredContent"] = structured
    return result


def wait(seconds: float) -> None:
    """Sleep, but exit as soon as stdin closes (the client gave up on us)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([sys.stdin], [], [], left)
        if readable and not sys.stdin.readline():
            sys.exit(0)


def big(message_id: Any, params: dict[str, Any]) -> None:
    """Write a big answer in two halves, waiting between them for the next call (see the module docstring)."""
    size = int(params["arguments"]["size"])
    token = (params.get("_meta") or {}).get("progressToken")
    if token is not None:
        send({"method": "notifications/progress", "params": {"progressToken": token, "progress": 0}})
    head, tail = json.dumps({"jsonrpc": "2.0", "id": message_id, "result": text("")}).split('"text": ""')
    sys.stdout.write(head + '"text": "' + "x" * (size // 2))
    sys.stdout.flush()
    while (line := sys.stdin.readline()) and (request := json.loads(line)).get("method") != "tools/call":
        pass
    if line and request["params"].get("name") == "crash":
        os._exit(3)
    sys.stdout.write("x" * (size - size // 2) + '"' + tail + "\n")
    sys.stdout.flush()
    if line:
        send({"id": json.loads(line)["id"], "result": text("released")})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--init-delay", type=float, default=0.0)
    parser.add_argument("--no-tools", action="store_true")
    parser.add_argument("--tools-list-error", type=int, default=None)
    parser.add_argument("--bad-output", action="store_true")
    args = parser.parse_args()
    capabilities: dict[str, Any] = {"resources": {"listChanged": True}, "prompts": {"listChanged": True}}
    if not args.no_tools:
        capabilities["tools"] = {"listChanged": True}
    while line := sys.stdin.readline():
        message = json.loads(line)
        method, message_id = message.get("method"), message.get("id")
        if message_id is None:
            continue  # notifications
        params = message.get("params") or {}
        if method == "initialize":
            wait(args.init_delay)
            result: dict[str, Any] = {
                "protocolVersion": params["protocolVersion"],
                "capabilities": capabilities,
                "serverInfo": {"name": "raw", "version": "0"},
            }
        elif method == "tools/list" and args.tools_list_error is not None:
            send({"id": message_id, "error": {"code": args.tools_list_error, "message": "tools are broken"}})
            continue
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "resources/list":
            result = {"resources": [{"uri": "raw://one", "name": "one"}]}
        elif method == "resources/templates/list":
            result = {"resourceTemplates": []}
        elif method == "prompts/list":
            result = {"prompts": [{"name": "hello"}]}
        elif method == "tools/call" and params.get("name") == "typed":
            result = text("n", {"n": "not a number" if args.bad_output else 1})
        elif method == "tools/call" and params.get("name") == "crash":
            os._exit(3)
        elif method == "tools/call" and params.get("name") == "big":
            big(message_id, params)
            continue
        elif method == "tools/call" and params.get("name") == "announce":
            for kind in ("tools", "resources", "prompts"):
                send({"method": f"notifications/{kind}/list_changed"})
            result = text("announced")
        elif method == "tools/call":
            result = text("pong")
        else:
            send({"id": message_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})
            continue
        send({"id": message_id, "result": result})


if __name__ == "__main__":
    main()
