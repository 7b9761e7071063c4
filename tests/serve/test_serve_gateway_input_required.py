"""An upstream server's ``InputRequiredResult`` (MCP 2026-07-28) through ``toolsift serve --gateway``.

The upstream is ``interop/fixture_2026.py`` (built to the conformance suite's
2026-07-28 scenarios), connected at 2026-07-28. A 2026-07-28 client gets the
server's question as the gateway's result and its retry reaches the server
with the answers and the server's ``requestState``; a handshake-era client is
asked the same question mid-call instead. The upstream runs in this process:
what the gateway passes on is the point (``test_serve_gateway_eras.py`` reaches
the fixture as a real HTTP server).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import mcp.types as types
import pytest
from mcp import Client, MCPError
from mcp.client.context import ClientRequestContext
from mcp_helpers import fixture_2026_in_process, in_memory_everywhere
from serve_project import served_http, text, write_project

FIXTURE = Path(__file__).resolve().parents[2] / "interop" / "fixture_2026.py"
UPSTREAM = {"command": sys.executable, "args": [str(FIXTURE)], "internalOnly": False, "protocol": "2026-07-28"}


@pytest.fixture(autouse=True)
async def upstream_in_process(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[None]:
    """The ``conformance`` upstream is the fixture's server in this process."""
    async with fixture_2026_in_process() as server:
        in_memory_everywhere(monkeypatch, {"conformance": server})
        yield


def project(tmp_path: Path) -> Path:
    return write_project(tmp_path, serve={"gateway": True, "prefixNames": False}, servers={"conformance": UPSTREAM})


def accept(content: dict[str, object]) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content)


async def test_gateway_passes_the_upstream_question_and_the_retry_with_its_state(tmp_path: Path) -> None:
    async with served_http(project(tmp_path)) as (url, _), Client(url) as client:
        asked = await client.session.call_tool(
            "test_input_required_result_request_state", {}, allow_input_required=True
        )
        assert isinstance(asked, types.InputRequiredResult)
        request = (asked.input_requests or {})["confirm"]
        assert isinstance(request, types.ElicitRequest) and request.params.message == "Please confirm"
        assert asked.request_state is not None
        done = await client.session.call_tool(
            "test_input_required_result_request_state",
            {},
            input_responses={"confirm": accept({"ok": True})},
            request_state=asked.request_state,
        )
    assert not done.is_error
    assert text(done) == "state-ok: the echoed request state was verified"


async def test_gateway_passes_each_round_of_a_multi_round_question(tmp_path: Path) -> None:
    async with served_http(project(tmp_path)) as (url, _), Client(url) as client:
        first = await client.session.call_tool("test_input_required_result_multi_round", {}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult) and set(first.input_requests or {}) == {"step1"}
        second = await client.session.call_tool(
            "test_input_required_result_multi_round",
            {},
            input_responses={"step1": accept({"name": "Ada"})},
            request_state=first.request_state,
            allow_input_required=True,
        )
        assert isinstance(second, types.InputRequiredResult) and set(second.input_requests or {}) == {"step2"}
        done = await client.session.call_tool(
            "test_input_required_result_multi_round",
            {},
            input_responses={"step2": accept({"color": "teal"})},
            request_state=second.request_state,
        )
    assert text(done) == "Both rounds answered; favourite colour: teal"


async def test_gateway_refuses_a_retry_whose_state_was_changed(tmp_path: Path) -> None:
    async with served_http(project(tmp_path)) as (url, _), Client(url) as client:
        asked = await client.session.call_tool(
            "test_input_required_result_tampered_state", {}, allow_input_required=True
        )
        assert isinstance(asked, types.InputRequiredResult) and asked.request_state is not None
        tampered = asked.request_state[:-4] + ("AAAA" if not asked.request_state.endswith("AAAA") else "BBBB")
        with pytest.raises(MCPError, match="(?i)state"):
            await client.session.call_tool(
                "test_input_required_result_tampered_state",
                {},
                input_responses={"confirm": accept({"ok": True})},
                request_state=tampered,
            )


async def test_gateway_passes_an_upstream_prompts_question(tmp_path: Path) -> None:
    async with served_http(project(tmp_path)) as (url, _), Client(url) as client:
        asked = await client.session.get_prompt("test_input_required_result_prompt", allow_input_required=True)
        assert isinstance(asked, types.InputRequiredResult) and set(asked.input_requests or {}) == {"user_context"}
        rendered = await client.session.get_prompt(
            "test_input_required_result_prompt",
            input_responses={"user_context": accept({"context": "the tests"})},
            request_state=asked.request_state,
        )
    message = rendered.messages[0].content
    assert isinstance(message, types.TextContent) and message.text == "Use this context: the tests"


async def test_gateway_passes_an_upstream_resources_question(tmp_path: Path) -> None:
    uri = "test://input-required/owls"
    async with served_http(project(tmp_path)) as (url, _), Client(url) as client:
        asked = await client.session.read_resource(uri, allow_input_required=True)
        assert isinstance(asked, types.InputRequiredResult) and set(asked.input_requests or {}) == {"reader"}
        read = await client.session.read_resource(
            uri, input_responses={"reader": accept({"name": "Ada"})}, request_state=asked.request_state
        )
    contents = read.contents[0]
    assert isinstance(contents, types.TextResourceContents) and contents.text == "Notes on owls, for Ada"


async def test_a_handshake_era_client_is_asked_the_upstream_question_mid_call(tmp_path: Path) -> None:
    asked: list[str] = []

    async def elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return accept({"name": "Ada"})

    async with (
        served_http(project(tmp_path)) as (url, _),
        Client(url, mode="legacy", elicitation_callback=elicit) as client,
    ):
        assert client.protocol_version == "2025-11-25"
        result = await client.call_tool("test_input_required_result_elicitation", {})
    assert asked == ["What is your name?"]
    assert text(result) == "Hello, Ada!"
