"""The gateway passes on all of MCP, not only tools: resources, prompts, completion, logging, sampling, elicitation.

The upstream is ``examples/servers/conformance.py`` (built to the conformance
suite's server spec); the downstream is the SDK's own client. The upstreams run
in this process where what the gateway passes on is the point. Over memory
streams an upstream's own requests run in the context of the call that led to
them, where the gateway knows that call; the test of a request the gateway
cannot attribute keeps a real stdio upstream.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from interop_servers import everything_entry, needs_everything, registered
from mcp import Client, MCPError
from mcp.client.context import ClientRequestContext
from mcp.client.session import IncomingMessage
from mcp_helpers import example_server, in_memory_everywhere, local_server_object
from serve_project import served_http, text, write_project
from servers import EXAMPLES, example_module

from toolsift.serve._relay import ClientRelay

# The upstream speaks the handshake era's sampling, logging and subscriptions on purpose (as its module says);
# in this process, the SDK's warnings of them would fail the tests.
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

UPSTREAM = {"command": sys.executable, "args": [str(EXAMPLES / "conformance.py")], "internalOnly": False}


@pytest.fixture
def upstreams_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each upstream server these tests name runs in this process, reached over memory streams."""
    conformance = example_module("conformance.py")
    monkeypatch.setattr(conformance, "subscribers", {})  # an earlier test's subscribed sessions are gone with it
    general = example_server("general.py")
    servers = {"conformance": conformance.mcp, "general": general, "hidden": general}
    in_memory_everywhere(monkeypatch, {**servers, "session": local_server_object("session_server.py")})


def project(tmp_path: Path, **serve: Any) -> Path:
    return write_project(tmp_path, serve={"gateway": True, **serve}, servers={"conformance": UPSTREAM})


class Downstream:
    """A client's answers to relayed requests, and what reached it."""

    def __init__(self) -> None:
        self.sampled: list[str] = []
        self.elicited: list[str] = []
        self.logs: list[str] = []
        self.updated: list[str] = []
        self.update_seen = anyio.Event()

    async def sample(
        self,
        context: ClientRequestContext,
        params: types.CreateMessageRequestParams,
    ) -> types.CreateMessageResult:
        content = params.messages[0].content
        self.sampled.append(content.text if isinstance(content, types.TextContent) else "?")
        return types.CreateMessageResult(role="assistant", content=types.TextContent(text="forty-two"), model="m")

    async def elicit(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.elicited.append(params.message)
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(str(params.data))

    async def message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updated.append(str(message.params.uri))
            self.update_seen.set()

    def client(self, url: str) -> Client:
        return Client(
            url,
            mode="legacy",
            sampling_callback=self.sample,
            elicitation_callback=self.elicit,
            logging_callback=self.log,
            message_handler=self.message,
        )


@pytest.mark.usefixtures("upstreams_in_process")
async def test_gateway_without_prefixes_is_transparent_for_tools(tmp_path: Path) -> None:
    config = project(tmp_path, prefixNames=False)
    steps: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        steps.append(done)

    down = Downstream()
    async with served_http(config) as (url, _), down.client(url) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert "builtin__read_file" in names and "skill__review" in names
        assert {"test_simple_text", "test_sampling", "json_schema_2020_12_tool"} <= set(names)
        assert not any(name.startswith("conformance__") for name in names)
        schema = next(t for t in (await client.list_tools()).tools if t.name == "json_schema_2020_12_tool").input_schema
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema" and "$defs" in schema

        simple = await client.call_tool("test_simple_text")
        assert text(simple) == "This is a simple text response for testing."
        mixed = await client.call_tool("test_multiple_content_types")
        assert [block.type for block in mixed.content] == ["text", "image", "resource"]
        failed = await client.call_tool("test_error_handling")
        assert failed.is_error
        assert (
            text(failed) == "Error executing tool test_error_handling: This tool intentionally returns an error "
            "for testing"
        )  # the server's words, without a header

        await client.call_tool("test_tool_with_progress", progress_callback=progress)
        assert steps == [0, 50, 100]
        await client.call_tool("test_tool_with_logging")
        assert down.logs == ["Tool execution started", "Tool processing data", "Tool execution completed"]

        sampled = await client.call_tool("test_sampling", {"prompt": "the answer?"})
        assert text(sampled) == "LLM response: forty-two"
        assert down.sampled == ["the answer?"]
        elicited = await client.call_tool("test_elicitation", {"message": "who are you?"})
        assert "action=accept" in text(elicited) and "ada@example.com" in text(elicited)
        assert down.elicited == ["who are you?"]


@pytest.mark.usefixtures("upstreams_in_process")
async def test_gateway_proxies_resources_prompts_completion_and_subscriptions(tmp_path: Path) -> None:
    down = Downstream()
    async with served_http(project(tmp_path)) as (url, _), down.client(url) as client:
        caps = client.server_capabilities
        assert caps.resources is not None and caps.resources.subscribe and caps.prompts is not None
        uris = {str(resource.uri) for resource in (await client.list_resources()).resources}
        assert {"test://static-text", "test://static-binary", "test://watched-resource"} <= uris
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["test://template/{id}/data"]

        static = (await client.read_resource("test://static-text")).contents[0]
        assert isinstance(static, types.TextResourceContents)
        assert static.text == "This is the content of the static text resource."
        binary = (await client.read_resource("test://static-binary")).contents[0]
        assert isinstance(binary, types.BlobResourceContents) and binary.mime_type == "image/png"
        templated = (await client.read_resource("test://template/123/data")).contents[0]
        assert isinstance(templated, types.TextResourceContents) and '"id": "123"' in templated.text
        with pytest.raises(MCPError, match="Unknown resource: other://nothing"):  # the one server's own answer
            await client.read_resource("other://nothing")

        prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]
        assert "conformance__test_prompt_with_arguments" in prompts
        rendered = await client.get_prompt("conformance__test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        assert rendered.messages[0].content == types.TextContent(text="Prompt with arguments: arg1='a', arg2='b'")
        with pytest.raises(MCPError, match="Unknown prompt 'test_simple_prompt'"):
            await client.get_prompt("test_simple_prompt")
        completed = await client.complete(
            types.PromptReference(name="conformance__test_prompt_with_arguments"), {"name": "arg1", "value": "par"}
        )
        assert completed.completion.values == ["paris", "park", "party"]
        by_template = await client.complete(
            types.ResourceTemplateReference(uri="test://template/{id}/data"), {"name": "id", "value": "pari"}
        )
        assert by_template.completion.values == ["paris"]

        await client.set_logging_level("info")
        await client.subscribe_resource("test://watched-resource")
        await client.call_tool("conformance__test_touch_watched")
        await down.update_seen.wait()
        assert down.updated == ["test://watched-resource"]
        await client.unsubscribe_resource("test://watched-resource")


@pytest.mark.usefixtures("upstreams_in_process")
async def test_gateway_routes_resources_and_prompts_among_servers(tmp_path: Path) -> None:
    general = {"command": sys.executable, "args": [str(EXAMPLES / "general.py")], "internalOnly": False}
    hidden = {**general, "internalOnly": True}
    config = write_project(
        tmp_path,
        serve={"gateway": True, "prefixNames": False},
        servers={"conformance": UPSTREAM, "general": general, "hidden": hidden},
    )
    async with served_http(config) as (url, _), Client(url, mode="legacy") as client:
        readme = (await client.read_resource("docs://readme")).contents[0]
        greeting = (await client.read_resource("greeting://ada")).contents[0]
        static = (await client.read_resource("test://static-text")).contents[0]
        with pytest.raises(MCPError, match="Resource 'other://nothing' not found: no server behind this gateway"):
            await client.read_resource("other://nothing")
        prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]
    assert isinstance(readme, types.TextResourceContents) and readme.text.startswith("general:")
    assert isinstance(greeting, types.TextResourceContents) and greeting.text == "Hello, ada!"
    assert isinstance(static, types.TextResourceContents) and "static text" in static.text
    # Unique names stay bare; the internal server's resources and prompts stay hidden.
    assert {"test_simple_prompt", "review", "summarize"} <= set(prompts)
    assert not any(name.startswith("hidden") for name in prompts)


@pytest.mark.usefixtures("upstreams_in_process")
async def test_gateway_refuses_a_relay_the_client_cannot_answer(tmp_path: Path) -> None:
    async with served_http(project(tmp_path, prefixNames=False)) as (url, _), Client(url, mode="legacy") as client:
        sampled = await client.call_tool("test_sampling", {"prompt": "x"})
        elicited = await client.call_tool("test_elicitation", {"message": "x"})
    # The upstream tool turns the refusal into its own error; the gateway's reason is in it.
    assert "the client has no sampling capability" in text(sampled)
    assert "the client has no elicitation capability" in text(elicited)


@pytest.mark.usefixtures("upstreams_in_process")
async def test_gateway_can_fence_results_for_a_model_on_the_other_side(tmp_path: Path) -> None:
    config = project(tmp_path, fenceGatewayResults=True)
    async with served_http(config) as (url, _), Client(url, mode="legacy") as client:
        simple = await client.call_tool("conformance__test_simple_text")
        failed = await client.call_tool("conformance__test_error_handling")
    assert "<<<UNTRUSTED TOOL RESULT" in text(simple)
    assert text(failed).startswith("Tool 'test_error_handling' of MCP server 'conformance' reported an error:")


async def test_gateway_refuses_to_guess_whose_call_a_request_belongs_to(tmp_path: Path) -> None:
    first, second = Downstream(), Downstream()
    first_asked, second_done = anyio.Event(), anyio.Event()

    async def elicit_slowly(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        first_asked.set()
        await second_done.wait()  # the second client's call runs on the same server meanwhile
        return types.ElicitResult(action="decline")

    first.elicit = elicit_slowly  # type: ignore[method-assign]
    results: dict[str, types.CallToolResult] = {}
    async with (
        served_http(project(tmp_path, prefixNames=False)) as (url, _),
        first.client(url) as one,
        second.client(url) as two,
        anyio.create_task_group() as group,
    ):

        async def call_first() -> None:
            results["first"] = await one.call_tool("test_elicitation", {"message": "first"})

        group.start_soon(call_first)
        await first_asked.wait()
        results["second"] = await two.call_tool("test_sampling", {"prompt": "second"})
        second_done.set()
    assert "action=decline" in text(results["first"])
    assert "calls of several clients run on MCP server 'conformance'" in text(results["second"])
    assert second.sampled == []


@pytest.mark.usefixtures("upstreams_in_process")
async def test_gateway_cannot_relay_mid_call_to_a_2026_client(tmp_path: Path) -> None:
    down = Downstream()
    async with (
        served_http(project(tmp_path, prefixNames=False)) as (url, _),
        Client(url, sampling_callback=down.sample) as client,
    ):
        assert client.protocol_version == "2026-07-28"
        sampled = await client.call_tool("test_sampling", {"prompt": "x"})
    assert "cannot pass to a 2026-07-28 client in the middle of a call" in text(sampled)
    assert down.sampled == []


async def test_relay_refuses_requests_made_outside_any_call() -> None:
    relay = ClientRelay().callbacks()
    assert relay.sampling is not None and relay.elicitation is not None
    params = types.CreateMessageRequestParams(messages=[], max_tokens=1)
    answer = await relay.sampling("quiet", params)
    assert isinstance(answer, types.ErrorData)
    assert answer.message == "MCP server 'quiet' asked outside of a call from a client; nobody to ask"


@pytest.mark.usefixtures("upstreams_in_process")
async def test_gateway_starts_lazy_servers_its_patterns_name_or_a_call_needs(tmp_path: Path) -> None:
    lazy = {**UPSTREAM, "lazy": True}
    named = write_project(
        tmp_path / "named", serve={"gateway": ["conformance__test_simple_*"]}, servers={"conformance": lazy}
    )
    async with served_http(named) as (url, server), Client(url, mode="legacy") as client:
        assert server.sessions is not None and server.sessions["conformance"].state.value == "ready"
        assert "conformance__test_simple_text" in [tool.name for tool in (await client.list_tools()).tools]
    called = write_project(tmp_path / "called", serve={"gateway": True}, servers={"conformance": lazy})
    async with served_http(called) as (url, server), Client(url, mode="legacy") as client:
        assert server.sessions is not None and server.sessions["conformance"].state.value == "idle"
        assert not any(tool.name.startswith("conformance__") for tool in (await client.list_tools()).tools)
        simple = await client.call_tool("conformance__test_simple_text")
    assert text(simple) == "This is a simple text response for testing."


@pytest.mark.usefixtures("upstreams_in_process")
async def test_logs_outside_calls_reach_clients_that_set_a_level(tmp_path: Path) -> None:
    listening, quiet = Downstream(), Downstream()
    async with served_http(project(tmp_path)) as (url, _), listening.client(url) as one, quiet.client(url) as two:
        await one.set_logging_level("debug")
        await two.subscribe_resource("test://watched-resource")  # the server logs as it subscribes
        await one.call_tool("conformance__test_simple_text")  # a round trip: the log line went out before it
    assert listening.logs == ["subscribed to test://watched-resource"]
    assert quiet.logs == []


@pytest.mark.usefixtures("upstreams_in_process")
async def test_requests_to_a_server_that_went_away_say_so(tmp_path: Path) -> None:
    async with served_http(project(tmp_path)) as (url, server), Client(url, mode="legacy") as client:
        assert server.sessions is not None
        await server.sessions["conformance"].close()
        for request in (
            client.read_resource("test://static-text"),
            client.get_prompt("conformance__test_simple_prompt"),
            client.complete(
                types.PromptReference(name="conformance__test_prompt_with_arguments"), {"name": "arg1", "value": "p"}
            ),
        ):
            with pytest.raises(MCPError, match="'conformance' is closed"):
                await request


@pytest.mark.usefixtures("upstreams_in_process")
async def test_a_client_that_refuses_sampling_is_heard(tmp_path: Path) -> None:
    async def refuse(context: ClientRequestContext, params: types.CreateMessageRequestParams) -> types.ErrorData:
        return types.ErrorData(code=types.INVALID_REQUEST, message="the person said no")

    async with (
        served_http(project(tmp_path, prefixNames=False)) as (url, _),
        Client(url, mode="legacy", sampling_callback=refuse) as client,
    ):
        sampled = await client.call_tool("test_sampling", {"prompt": "x"})
    assert "the person said no" in text(sampled)


@pytest.mark.usefixtures("upstreams_in_process")
async def test_a_2026_server_asking_within_a_call_reaches_the_calling_client(tmp_path: Path) -> None:
    # A 2026-07-28 server asks by InputRequiredResult; the SDK answers it in the calling task.
    upstream = {
        "command": sys.executable,
        "args": [str(Path(__file__).parents[1] / "session_server.py")],
        "internalOnly": False,
        "protocol": "2026-07-28",
    }
    config = write_project(tmp_path, serve={"gateway": True}, servers={"session": upstream})
    down = Downstream()
    async with served_http(config) as (url, server), down.client(url) as client:
        assert server.sessions is not None and server.sessions["session"].protocol_version == "2026-07-28"
        answered = await client.call_tool("session__ask", {"question": "2+2?"})
    assert text(answered) == "forty-two" and down.sampled == ["2+2?"]


@pytest.mark.usefixtures("upstreams_in_process")
async def test_the_gateway_passes_on_its_upstream_servers_instructions(tmp_path: Path) -> None:
    hidden = {"command": sys.executable, "args": [str(EXAMPLES / "general.py")]}  # internal, no served tools
    config = write_project(tmp_path, serve={"gateway": True}, servers={"conformance": UPSTREAM, "general": hidden})
    async with served_http(config) as (url, _), Client(url, mode="legacy") as client:
        instructions = client.session.instructions
    assert instructions is not None and instructions.startswith("toolsift serves builtin tools")
    assert "# MCP server conformance\n\n<<<UNTRUSTED TOOL RESULT" in instructions
    assert "Every feature the conformance suite checks." in instructions
    assert "Everyday tools" not in instructions  # an internal server the gateway does not proxy


@needs_everything
async def test_a_tool_that_runs_only_as_a_task_answers_gateway_clients_as_a_plain_call(tmp_path: Path) -> None:
    upstream = everything_entry(internalOnly=False)
    config = write_project(tmp_path, serve={"gateway": True}, servers={"everything": upstream})
    async with served_http(config) as (url, server), Client(url, mode="legacy") as client:
        await registered(server.registry, "everything__simulate-research-query")
        answered = await client.call_tool("everything__simulate-research-query", {"topic": "bees"})
    assert not answered.is_error and "# Research Report: bees" in text(answered)
