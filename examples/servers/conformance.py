"""An MCP server built to the server scenarios of the official conformance suite.

The suite is npm ``@modelcontextprotocol/conformance``. Each tool, resource
and prompt is the one a scenario's description asks for
(``test_simple_text``, ``test://static-text``, ``test_simple_prompt``...), so
the suite can be run against this server directly and against ``toolsift serve
--gateway`` in front of it, and the two tallies compared. It also answers
completion, log levels and resource subscriptions (``test_touch_watched``
changes the watched resource, so a subscriber can see an update arrive), and
asks its client for sampling and elicitation from inside tools, the classic
way, over a handshake-era connection.

Run it::

    python examples/servers/conformance.py                       # stdio
    python examples/servers/conformance.py --http [--port N] [--ready-file PATH]
"""

from __future__ import annotations

import base64
import json
import warnings
from typing import Any

import anyio
import mcp.types as types
from _http import run_stdio_or_http
from _media import tiny_wav
from mcp.server import ServerRequestContext
from mcp.server.mcpserver import Audio, Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp.shared.exceptions import MCPDeprecationWarning
from pydantic import BaseModel, Field

# The server speaks the handshake era's logging and subscriptions on purpose: the suite tests them.
warnings.simplefilter("ignore", MCPDeprecationWarning)

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
WATCHED = "test://watched-resource"
STEP_SECONDS = 0.05  # the spec's pause between log lines and between progress steps

mcp = MCPServer(
    "conformance", version="0.1.0", instructions="Every feature the conformance suite checks.", log_level="WARNING"
)
subscribers: dict[str, list[Any]] = {}
watched_version = 0


# -- tools -------------------------------------------------------------------------------------


@mcp.tool()
def test_simple_text() -> str:
    """Return one text block."""
    return "This is a simple text response for testing."


@mcp.tool()
def test_image_content() -> Image:
    """Return a 1x1 PNG image."""
    return Image(data=PNG_1X1, format="png")


@mcp.tool()
def test_audio_content() -> Audio:
    """Return a short WAV file."""
    return Audio(data=tiny_wav(), format="wav")


@mcp.tool()
def test_embedded_resource() -> list[types.ContentBlock]:
    """Return an embedded text resource."""
    return [
        types.EmbeddedResource(
            resource=types.TextResourceContents(
                uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
            )
        )
    ]


@mcp.tool()
def test_multiple_content_types() -> list[types.ContentBlock]:
    """Return text, an image and an embedded JSON resource."""
    return [
        types.TextContent(text="Multiple content types test:"),
        types.ImageContent(data=base64.b64encode(PNG_1X1).decode(), mime_type="image/png"),
        types.EmbeddedResource(
            resource=types.TextResourceContents(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text=json.dumps({"test": "data", "value": 123}),
            )
        ),
    ]


@mcp.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Send three info log messages while running."""
    for step, text in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
        if step:
            await anyio.sleep(STEP_SECONDS)
        await ctx.info(text)
    return "Tool with logging executed successfully"


@mcp.tool()
def test_error_handling() -> str:
    """Always fail (an isError result)."""
    raise ToolError("This tool intentionally returns an error for testing")


@mcp.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Report progress 0, 50 and 100 of 100."""
    for step, value in enumerate((0, 50, 100)):
        if step:
            await anyio.sleep(STEP_SECONDS)
        await ctx.report_progress(value, 100)
    return "Tool with progress executed successfully"


@mcp.tool()
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Ask the client's model to answer the prompt."""
    result = await ctx.session.create_message(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(text=prompt))], max_tokens=100
    )
    content = result.content
    text = content.text if isinstance(content, types.TextContent) else str(content)
    return f"LLM response: {text}"


class UserResponse(BaseModel):
    username: str = Field(description="User's response")
    email: str = Field(description="User's email address")


@mcp.tool()
async def test_elicitation(message: str, ctx: Context) -> str:
    """Ask the person for a username and an e-mail address."""
    result = await ctx.elicit(message=message, schema=UserResponse)
    content = result.data.model_dump() if result.action == "accept" else None
    return f"User response: action={result.action}, content={json.dumps(content)}"


class Defaults(BaseModel):
    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: str = Field(default="active", json_schema_extra={"enum": ["active", "inactive", "pending"]})
    verified: bool = True


@mcp.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Ask with a default for every primitive type."""
    result = await ctx.elicit(message="Please provide user information", schema=Defaults)
    content = result.data.model_dump() if result.action == "accept" else None
    return f"Elicitation completed: action={result.action}, content={json.dumps(content)}"


_ENUM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}


@mcp.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Ask with each of the five enum forms."""
    result = await ctx.session.elicit_form("Please choose options", _ENUM_SCHEMA, related_request_id=ctx.request_id)
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


def json_schema_2020_12_tool(name: str = "", address: dict[str, str] | None = None) -> str:
    """Tool with JSON Schema 2020-12 features"""
    return f"name={name}, address={address}"


mcp.add_tool(json_schema_2020_12_tool)
# MCPServer derives schemas from signatures; the scenario checks keywords a signature cannot produce.
mcp._tool_manager.get_tool("json_schema_2020_12_tool").parameters = JSON_SCHEMA_2020_12


@mcp.tool()
async def test_reconnection() -> str:
    """Answer at once (the suite's SSE polling check closes streams only on servers that keep events)."""
    return "Reconnection test completed"


@mcp.tool()
async def test_touch_watched() -> str:
    """Change the watched resource and tell its subscribers."""
    global watched_version
    watched_version += 1
    for session in list(subscribers.get(WATCHED, [])):
        await session.send_resource_updated(WATCHED)
    return f"watched resource is at version {watched_version}"


# -- resources ---------------------------------------------------------------------------------


@mcp.resource("test://static-text", name="static-text", mime_type="text/plain", description="A static text resource")
def static_text() -> str:
    return "This is the content of the static text resource."


@mcp.resource(
    "test://static-binary", name="static-binary", mime_type="image/png", description="A static binary resource"
)
def static_binary() -> bytes:
    return PNG_1X1


@mcp.resource(
    "test://template/{id}/data",
    name="template",
    mime_type="application/json",
    description="A resource made from a template",
)
def template(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@mcp.resource(WATCHED, name="watched-resource", mime_type="text/plain", description="A resource to subscribe to")
def watched() -> str:
    return f"watched resource, version {watched_version}"


# -- prompts -----------------------------------------------------------------------------------


@mcp.prompt()
def test_simple_prompt() -> str:
    """A prompt without arguments."""
    return "This is a simple prompt for testing."


@mcp.prompt()
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@mcp.prompt()
def test_prompt_with_embedded_resource(resourceUri: str) -> list[Message]:  # the spec's name
    """A prompt that embeds a resource."""
    return [
        UserMessage(
            content=types.EmbeddedResource(
                resource=types.TextResourceContents(
                    uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
                )
            )
        ),
        UserMessage(content=types.TextContent(text="Please process the embedded resource above.")),
    ]


@mcp.prompt()
def test_prompt_with_image() -> list[Message]:
    """A prompt with an image."""
    return [
        UserMessage(content=types.ImageContent(data=base64.b64encode(PNG_1X1).decode(), mime_type="image/png")),
        UserMessage(content=types.TextContent(text="Please analyze the image above.")),
    ]


@mcp.completion()
async def complete(
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: types.CompletionArgument,
    context: types.CompletionContext | None,
) -> types.Completion:
    words = ["paris", "park", "party"]
    return types.Completion(values=[word for word in words if word.startswith(argument.value)], has_more=False)


# -- handshake-era requests MCPServer has no decorator for ---------------------------------------


async def set_level(ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


async def subscribe(ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams) -> types.EmptyResult:
    subscribers.setdefault(str(params.uri), []).append(ctx.session)
    # A log message outside any tool call: clients hear it when they asked for a log level.
    await ctx.session.send_log_message("info", f"subscribed to {params.uri}")
    return types.EmptyResult()


async def unsubscribe(ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    subscribers.pop(str(params.uri), None)
    return types.EmptyResult()


_lowlevel = mcp._lowlevel_server  # MCPServer has no public hook for these three
_lowlevel.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
_lowlevel.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribe)
_lowlevel.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)


def main() -> None:
    run_stdio_or_http(mcp, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
