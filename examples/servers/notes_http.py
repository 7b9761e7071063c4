"""A small notes MCP server served over Streamable HTTP on 127.0.0.1.

Notes live in the server process and are shared by every client, so one
client can add a note that another reads.

Run it::

    python examples/servers/notes_http.py [--port N] [--ready-file PATH] [--stateless] [--json-response]

Flags:
    --port N            TCP port on 127.0.0.1; 0 (the default) picks a free one.
    --ready-file PATH   once the server accepts connections, write its URL to PATH
                        (atomically); ``READY <url>`` is printed on stderr as well.
    --stateless         no MCP session ids: every request stands alone.
    --json-response     answer with plain JSON bodies instead of SSE streams
                        (progress notifications then have no way to arrive).
    --http              accepted for uniformity with the other examples; this
                        server always speaks HTTP.
"""

from __future__ import annotations

import argparse

import mcp.types as types
from _http import add_http_arguments, serve_http
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

NOTES: dict[str, str] = {}
READ_ONLY = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)

mcp = MCPServer("notes", version="0.1.0", instructions="Keep short notes by title.", log_level="WARNING")


@mcp.tool(annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False))
def note_add(title: str, body: str) -> str:
    """Save a note under a title; an existing note with that title is replaced."""
    replaced = title in NOTES
    NOTES[title] = body
    return f"{'updated' if replaced else 'added'} note {title!r}"


@mcp.tool(annotations=READ_ONLY)
def note_list() -> list[str]:
    """List the titles of all notes, sorted."""
    return sorted(NOTES)


@mcp.tool(annotations=READ_ONLY)
def note_get(title: str) -> str:
    """Return the body of the note with this title."""
    if title not in NOTES:
        raise ToolError(f"No note titled {title!r}")
    return NOTES[title]


@mcp.tool(annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False))
def note_delete(title: str) -> str:
    """Delete the note with this title."""
    if NOTES.pop(title, None) is None:
        raise ToolError(f"No note titled {title!r}")
    return f"deleted note {title!r}"


def main() -> None:
    parser = argparse.ArgumentParser(description="A notes MCP server over Streamable HTTP.")
    add_http_arguments(parser)
    parser.add_argument("--stateless", action="store_true", help="no MCP sessions (stateless HTTP)")
    parser.add_argument("--json-response", action="store_true", help="JSON bodies instead of SSE streams")
    args = parser.parse_args()
    app = mcp.streamable_http_app(stateless_http=args.stateless, json_response=args.json_response)
    serve_http(app, port=args.port, ready_file=args.ready_file)


if __name__ == "__main__":
    main()
