"""An MCP server built to the conformance suite's 2026-07-28 server scenarios (0.2.0 alphas).

It is ``examples/servers/conformance.py`` (the 0.1.16 fixture: content types,
resources, prompts, completion) plus what the 2026-07-28 requirement set asks
for: the ``test_input_required_result_*`` tools and prompt, and a resource
(``test://input-required/{topic}``) that asks the same way (a server asks for
elicitation, sampling or roots by returning ``InputRequiredResult`` and the
client retries with the answers, the SDK sealing ``requestState`` so a
tampered one is refused), ``test_missing_capability`` (a call that needs the
sampling capability), a JSON Schema 2020-12 tool schema with every keyword
the suite looks for, a tool with an ``x-mcp-header`` parameter, and the Tasks
extension (``interop/fixture_tasks.py``). Each scenario's description in the
suite says what it must implement; ``conformance list --server
--requirements 2026-07-28`` lists them.

Run it::

    python interop/fixture_2026.py                       # stdio
    python interop/fixture_2026.py --http [--port N] [--ready-file PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.prompts import Prompt
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount
from starlette.types import ASGIApp, Receive, Scope, Send

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "servers"
sys.path.insert(0, str(EXAMPLES))  # the 0.1.16 fixture and its HTTP helpers live beside the examples

from _http import add_http_arguments, serve_http  # noqa: E402
from conformance import mcp  # noqa: E402
from fixture_tasks import TaskNameHeaderCheck, TasksExtension  # noqa: E402

NAME_SCHEMA = {"name": {"type": "string"}}


def elicit(message: str, properties: dict[str, Any]) -> types.ElicitRequest:
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))


def sample(text: str, max_tokens: int) -> types.CreateMessageRequest:
    message = types.SamplingMessage(role="user", content=types.TextContent(text=text))
    return types.CreateMessageRequest(
        params=types.CreateMessageRequestParams(messages=[message], max_tokens=max_tokens)
    )


def list_roots() -> types.ListRootsRequest:
    return types.ListRootsRequest(params=types.RequestParams())


def accepted(ctx: Context, key: str, field: str) -> Any:
    """The ``field`` of an accepted elicitation answered under ``key``, or None."""
    answer = (ctx.input_responses or {}).get(key)
    if isinstance(answer, types.ElicitResult) and answer.action == "accept":
        return (answer.content or {}).get(field)
    return None


def answered(ctx: Context, *keys: str) -> bool:
    return all(key in (ctx.input_responses or {}) for key in keys)


# -- InputRequiredResult (SEP-2322) ------------------------------------------------------------


@mcp.tool()
def test_input_required_result_elicitation(ctx: Context) -> str | types.InputRequiredResult:
    """Ask the person's name by InputRequiredResult, then greet them."""
    name = accepted(ctx, "user_name", "name")
    if not isinstance(name, str):
        return types.InputRequiredResult(input_requests={"user_name": elicit("What is your name?", NAME_SCHEMA)})
    return f"Hello, {name}!"


@mcp.tool()
def test_input_required_result_sampling(ctx: Context) -> str | types.InputRequiredResult:
    """Ask the client's model a question, then repeat its answer."""
    answer = (ctx.input_responses or {}).get("capital_question")
    if not isinstance(answer, types.CreateMessageResult):
        return types.InputRequiredResult(
            input_requests={"capital_question": sample("What is the capital of France?", 100)}
        )
    content = answer.content
    return f"The model said: {content.text if isinstance(content, types.TextContent) else content}"


@mcp.tool()
def test_input_required_result_list_roots(ctx: Context) -> str | types.InputRequiredResult:
    """Ask the client's roots, then name them."""
    answer = (ctx.input_responses or {}).get("client_roots")
    if not isinstance(answer, types.ListRootsResult):
        return types.InputRequiredResult(input_requests={"client_roots": list_roots()})
    return "Client roots: " + ", ".join(str(root.uri) for root in answer.roots)


CONFIRM = {"ok": {"type": "boolean"}}


@mcp.tool()
def test_input_required_result_request_state(ctx: Context) -> str | types.InputRequiredResult:
    """Ask for a confirmation with a request state, and check the state that comes back."""
    if ctx.request_state != "confirm-round" or not answered(ctx, "confirm"):
        return types.InputRequiredResult(
            input_requests={"confirm": elicit("Please confirm", CONFIRM)}, request_state="confirm-round"
        )
    return "state-ok: the echoed request state was verified"


@mcp.tool()
def test_input_required_result_tampered_state(ctx: Context) -> str | types.InputRequiredResult:
    """Like the request-state tool: the SDK refuses a state the client changed before this runs."""
    if ctx.request_state != "tamper-proof" or not answered(ctx, "confirm"):
        return types.InputRequiredResult(
            input_requests={"confirm": elicit("Please confirm", CONFIRM)}, request_state="tamper-proof"
        )
    return "Request state verified"


@mcp.tool()
def test_input_required_result_multiple_inputs(ctx: Context) -> str | types.InputRequiredResult:
    """Ask for an elicitation, a sampling and the roots in one round."""
    if ctx.request_state != "all-three" or not answered(ctx, "user_name", "greeting", "client_roots"):
        return types.InputRequiredResult(
            input_requests={
                "user_name": elicit("What is your name?", NAME_SCHEMA),
                "greeting": sample("Generate a greeting", 50),
                "client_roots": list_roots(),
            },
            request_state="all-three",
        )
    return "Every input answered; the call is complete"


@mcp.tool()
def test_input_required_result_multi_round(ctx: Context) -> str | types.InputRequiredResult:
    """Ask two questions in two rounds, the request state naming the round."""
    if ctx.request_state == "round-2" and answered(ctx, "step2"):
        return f"Both rounds answered; favourite colour: {accepted(ctx, 'step2', 'color')}"
    if ctx.request_state == "round-1" and answered(ctx, "step1"):
        return types.InputRequiredResult(
            input_requests={"step2": elicit("Step 2: What is your favorite color?", {"color": {"type": "string"}})},
            request_state="round-2",
        )
    return types.InputRequiredResult(
        input_requests={"step1": elicit("Step 1: What is your name?", NAME_SCHEMA)}, request_state="round-1"
    )


@mcp.tool()
def test_input_required_result_capabilities(ctx: Context) -> str | types.InputRequiredResult:
    """Ask only for what the client declared it can answer."""
    if answered(ctx, "sampling") or answered(ctx, "elicitation") or answered(ctx, "roots"):
        return "Declared-capability input answered"
    declared = ctx.client_capabilities or types.ClientCapabilities()
    requests: dict[str, types.InputRequest] = {}
    if declared.sampling is not None:
        requests["sampling"] = sample("Generate a greeting", 50)
    if declared.elicitation is not None:
        requests["elicitation"] = elicit("What is your name?", NAME_SCHEMA)
    if declared.roots is not None:
        requests["roots"] = list_roots()
    if not requests:
        return "The client declared no capability to ask with"
    return types.InputRequiredResult(input_requests=requests)


CONTEXT_SCHEMA = {"context": {"type": "string"}}


@mcp.tool()
async def test_logging_tool(ctx: Context) -> str:
    """Log at info while running: a 2026-07-28 client gets the lines only when its request asked for a level."""
    await ctx.info("test_logging_tool ran")
    return "logged"


# The suite's hooks for list changes on subscriptions/listen streams: each call adds the changing tool
# (or prompt) when it is absent and removes it when it is there, so every call changes the list.
CHANGING = "test_changing"


def _changing_tool() -> str:
    """A tool that comes and goes with each test_trigger_tool_change."""
    return "still here"


def _changing_prompt() -> str:
    """A prompt that comes and goes with each test_trigger_prompt_change."""
    return "still here"


@mcp.tool()
async def test_trigger_tool_change(ctx: Context) -> str:
    """Add or remove the tool test_changing, and announce that the tool list changed."""
    if any(tool.name == CHANGING for tool in await mcp.list_tools()):
        mcp.remove_tool(CHANGING)
    else:
        mcp.add_tool(_changing_tool, name=CHANGING)
    await ctx.notify_tools_changed()
    return "the tool list changed"


@mcp.tool()
async def test_trigger_prompt_change(ctx: Context) -> str:
    """Add or remove the prompt test_changing, and announce that the prompt list changed."""
    if any(prompt.name == CHANGING for prompt in await mcp.list_prompts()):
        mcp.remove_prompt(CHANGING)
    else:
        mcp.add_prompt(Prompt.from_function(_changing_prompt, name=CHANGING))
    await ctx.notify_prompts_changed()
    return "the prompt list changed"


@mcp.prompt()
def test_input_required_result_prompt(ctx: Context) -> str | types.InputRequiredResult:
    """A prompt that asks for its context before it renders."""
    context = accepted(ctx, "user_context", "context")
    if not isinstance(context, str):
        return types.InputRequiredResult(
            input_requests={
                "user_context": elicit("What context should the prompt use?", {"context": {"type": "string"}})
            }
        )
    return f"Use this context: {context}"


@mcp.resource(
    "test://input-required/{topic}",
    name="input-required",
    mime_type="text/plain",
    description="A resource that asks who reads it before it is read",
)
def input_required_resource(topic: str, ctx: Context) -> str | types.InputRequiredResult:
    reader = accepted(ctx, "reader", "name")
    if not isinstance(reader, str):
        return types.InputRequiredResult(input_requests={"reader": elicit(f"Who reads about {topic}?", NAME_SCHEMA)})
    return f"Notes on {topic}, for {reader}"


# -- stateless operation (SEP-2575), schemas (SEP-2106), custom headers (SEP-2243) ---------------


@mcp.tool()
def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability, declared on the request."""
    declared = ctx.client_capabilities
    if declared is None or declared.sampling is None:
        raise MCPError(
            code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
            message="This tool needs the client's sampling capability",
            data={"requiredCapabilities": {"sampling": {}}},
        )
    return "The sampling capability was declared"


JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def set_input_schema(tool: str, schema: dict[str, Any]) -> None:
    """Give ``tool`` a schema MCPServer cannot derive from a signature (keywords the scenarios look for)."""
    registered = mcp._tool_manager.get_tool(tool)
    assert registered is not None, tool
    registered.parameters = schema


set_input_schema("json_schema_2020_12_tool", JSON_SCHEMA_2020_12)


def test_header_echo(text: str = "") -> str:
    """Echo ``text``, which clients also send in the ``Mcp-Param-Text`` header."""
    return text


mcp.add_tool(test_header_echo)
set_input_schema(
    "test_header_echo", {"type": "object", "properties": {"text": {"type": "string", "x-mcp-header": "Text"}}}
)

# -- the Tasks extension -----------------------------------------------------------------------

tasks = TasksExtension()
# MCPServer takes extensions only when constructed; the 0.1.16 fixture built it without one.
mcp._apply_extension(tasks)
mcp._install_extension_interceptor()


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    async with tasks.running(), mcp.session_manager.run():
        yield


class HandshakeRefusal:
    """Refuse the handshake era's ``initialize`` as servers of MCP 2026-07-28 alone do (``--modern-only``).

    The conformance suite's 2026-07-28 client scenarios do it two ways: with
    ``refuse``, the request lacks the per-request ``MCP-Protocol-Version``
    header (HTTP 400, ``-32020``); with ``answer``, the server answers
    ``initialize`` with its own version, 2026-07-28, which no handshake accepts.
    """

    def __init__(self, app: ASGIApp, how: str) -> None:
        self._app = app
        self._how = how

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or Headers(scope=scope).get(MCP_VERSION):
            await self._app(scope, receive, send)
            return
        if self._how == "refuse":
            error = {"code": types.HEADER_MISMATCH, "message": f"Missing {MCP_VERSION} header"}
            response = JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=400)
        else:
            request = json.loads(await Request(scope, receive).body())
            info = {"name": "modern-only", "version": "1"}
            result = {"protocolVersion": "2026-07-28", "capabilities": {}, "serverInfo": info}
            response = JSONResponse({"jsonrpc": "2.0", "id": request.get("id"), "result": result})
        await response(scope, receive, send)


MCP_VERSION = "mcp-protocol-version"


async def serve_stdio() -> None:
    async with tasks.running():
        await mcp.run_stdio_async()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_http_arguments(parser)
    parser.add_argument("--modern-only", choices=("refuse", "answer"), help="refuse the handshake era (HTTP only)")
    args = parser.parse_args()
    if args.http:
        served: ASGIApp = TaskNameHeaderCheck(mcp.streamable_http_app())
        app = Starlette(
            routes=[Mount("/", app=HandshakeRefusal(served, args.modern_only) if args.modern_only else served)],
            lifespan=lifespan,
        )
        serve_http(app, port=args.port, ready_file=args.ready_file)
    else:
        anyio.run(serve_stdio)


if __name__ == "__main__":
    main()
