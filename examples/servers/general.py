"""A small everyday MCP server: one tool per content type and per protocol feature.

It exists so that clients (and toolsift's tests) can exercise every result
shape and call feature against a real server: text, structured output, images,
audio, embedded resources (text and blob), resource links, tool errors,
progress, cancellation, plus resources, a resource template and prompts.
``wait_for_file`` answers only once a file exists, so a client can hold calls
in flight for exactly as long as it wants, on a machine of any speed.

Run it::

    python examples/servers/general.py                       # stdio
    python examples/servers/general.py --http [--port N] [--ready-file PATH]

Environment:
    TOOLSIFT_CANCEL_MARKER  when set, a cancelled ``slow`` or ``wait_for_file`` call
                            appends the line ``CANCELLED <tool>`` to this file (it
                            always writes it to stderr too), so a test can prove
                            that ``notifications/cancelled`` reached the server.
"""

from __future__ import annotations

import base64
import os
import sys

import anyio
import mcp.types as types
from _http import run_stdio_or_http
from _media import tiny_wav
from mcp.server.mcpserver import Audio, Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

CANCEL_MARKER_ENV = "TOOLSIFT_CANCEL_MARKER"
# How often wait_for_file looks for its file: another process's file gives no event to wait on.
POLL_SECONDS = 0.01

# The smallest valid PNG: one opaque pixel.
PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
BLOB = bytes(range(16))
READ_ONLY = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
SIDE_EFFECT = types.ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DOCS = {
    "readme": "general: an everyday MCP server used by toolsift's tests.",
    "changelog": "0.1.0: first release.",
}


mcp = MCPServer(
    "general", version="0.1.0", instructions="Everyday tools, resources and prompts for testing.", log_level="WARNING"
)


@mcp.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Return the given text unchanged."""
    return text


@mcp.tool(annotations=READ_ONLY)
def add(a: int, b: int) -> int:
    """Add two integers; the sum also comes back as structured content {"result": sum}."""
    return a + b


@mcp.tool(annotations=READ_ONLY)
def get_image() -> Image:
    """Return a 1x1 PNG image."""
    return Image(data=PNG_1X1, format="png")


@mcp.tool(annotations=READ_ONLY)
def get_audio() -> Audio:
    """Return ten milliseconds of silence as a WAV file."""
    return Audio(data=tiny_wav(), format="wav")


@mcp.tool(annotations=READ_ONLY)
def get_resource() -> list[types.ContentBlock]:
    """Return the readme as an embedded text resource."""
    contents = types.TextResourceContents(uri="docs://readme", mime_type="text/plain", text=DOCS["readme"])
    return [types.EmbeddedResource(resource=contents)]


@mcp.tool(annotations=READ_ONLY)
def get_blob_resource() -> list[types.ContentBlock]:
    """Return sixteen bytes (0x00..0x0f) as an embedded binary resource."""
    contents = types.BlobResourceContents(
        uri="blob://bytes", mime_type="application/octet-stream", blob=base64.b64encode(BLOB).decode()
    )
    return [types.EmbeddedResource(resource=contents)]


@mcp.tool(annotations=READ_ONLY)
def get_link() -> list[types.ContentBlock]:
    """Return a link to the changelog resource instead of its content."""
    return [types.ResourceLink(uri="docs://changelog", name="changelog", mime_type="text/plain")]


def _report_cancelled(tool: str) -> None:
    print(f"CANCELLED {tool}", file=sys.stderr, flush=True)
    marker = os.environ.get(CANCEL_MARKER_ENV)
    if marker:
        with open(marker, "a", encoding="utf-8") as handle:
            handle.write(f"CANCELLED {tool}\n")


@mcp.tool(annotations=READ_ONLY)
async def slow(seconds: float) -> str:
    """Sleep for the given number of seconds, then answer; reports when it is cancelled."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _report_cancelled("slow")
        raise
    return f"slept {seconds}"


@mcp.tool(annotations=READ_ONLY)
async def wait_for_file(path: str, ctx: Context) -> str:
    """Wait until a file exists at the given path, then answer with its text; reports when it is cancelled."""
    # One progress notification (when the client asked for progress) says the call is under way.
    await ctx.report_progress(0, None, f"waiting for {path}")
    try:
        while not os.path.exists(path):
            await anyio.sleep(POLL_SECONDS)
    except anyio.get_cancelled_exc_class():
        _report_cancelled("wait_for_file")
        raise
    with open(path, encoding="utf-8") as handle:
        return handle.read()


@mcp.tool(annotations=READ_ONLY)
async def progress(steps: int, ctx: Context) -> str:
    """Count to the given number of steps, reporting progress after each one."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"done {steps} steps"


@mcp.tool(annotations=READ_ONLY)
def fail(message: str) -> str:
    """Always fail with the given message (an isError result, not a protocol error)."""
    raise ToolError(message)


@mcp.tool(annotations=READ_ONLY)
def env_get(name: str) -> str:
    """Return the value of an environment variable of the server process, or "<unset>"."""
    return os.environ.get(name, "<unset>")


@mcp.tool(annotations=SIDE_EFFECT)
def log_stderr(text: str) -> str:
    """Write the text as one line on the server's stderr."""
    print(text, file=sys.stderr, flush=True)
    return "logged"


@mcp.resource("docs://readme", name="readme", mime_type="text/plain", description="What this server is.")
def readme() -> str:
    return DOCS["readme"]


@mcp.resource("docs://changelog", name="changelog", mime_type="text/plain", description="Release notes.")
def changelog() -> str:
    return DOCS["changelog"]


@mcp.resource("greeting://{name}", name="greeting", mime_type="text/plain", description="A greeting for a name.")
def greeting(name: str) -> str:
    return f"Hello, {name}!"


@mcp.prompt()
def review(code: str) -> str:
    """Ask for a code review of the given snippet."""
    return f"Please review this code and point out bugs and unclear names:\n\n{code}"


@mcp.prompt()
def summarize(text: str, style: str = "short") -> str:
    """Ask for a summary of the text in the given style (short, bullet or detailed)."""
    return f"Summarize the following text in a {style} style:\n\n{text}"


def main() -> None:
    run_stdio_or_http(mcp, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
