"""An HTTP upstream at the default ``protocol: auto`` is reached through the gateway in each client's era.

The gateway's session keeps a 2026-07-28 connection and, beside it, a
handshake-era one: a 2026-07-28 client's call passes the server's
``InputRequiredResult`` as it came (as with the upstream pinned at 2026-07-28),
and a handshake-era client's call goes over the handshake era, where a server
written against the classic API asks it mid-call, as it always did. Both tests
reach one upstream process (``fixture_2026.py`` holds the classic tools too): they only read from it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import mcp.types as types
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext
from serve_project import served_http, text, write_project
from servers import http_server

FIXTURE = str(Path(__file__).resolve().parents[2] / "interop" / "fixture_2026.py")


@pytest.fixture(scope="module")
async def upstream() -> AsyncIterator[str]:
    """The fixture served over HTTP, once for the module; its URL."""
    async with http_server(FIXTURE) as url:
        yield url


def project(tmp_path: Path, url: str) -> Path:
    upstream = {"url": url, "internalOnly": False}  # protocol: auto
    return write_project(tmp_path, serve={"gateway": True, "prefixNames": False}, servers={"upstream": upstream})


async def test_a_2026_client_gets_the_upstreams_question_as_it_came(tmp_path: Path, upstream: str) -> None:
    async with (
        served_http(project(tmp_path, upstream)) as (url, server),
        Client(url) as client,
    ):
        asked = await client.session.call_tool(
            "test_input_required_result_request_state", {}, allow_input_required=True
        )
        assert isinstance(asked, types.InputRequiredResult) and asked.request_state is not None
        done = await client.session.call_tool(
            "test_input_required_result_request_state",
            {},
            input_responses={"confirm": types.ElicitResult(action="accept", content={"ok": True})},
            request_state=asked.request_state,
        )
        assert server.sessions is not None and server.sessions["upstream"].protocol_version == "2026-07-28"
    assert text(done) == "state-ok: the echoed request state was verified"


async def test_a_handshake_era_client_is_asked_mid_call_by_a_classic_upstream(tmp_path: Path, upstream: str) -> None:
    elicited: list[str] = []

    async def elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        elicited.append(params.message)
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})

    async with (
        served_http(project(tmp_path, upstream)) as (url, server),
        Client(url, mode="legacy", elicitation_callback=elicit) as legacy,
        Client(url) as modern,
    ):
        answered = await legacy.call_tool("test_elicitation", {"message": "who are you?"})
        refused = await modern.call_tool("test_elicitation", {"message": "and you?"})
        assert server.sessions is not None
        session = server.sessions["upstream"]
        assert session.protocol_version == "2026-07-28"
        assert not session._sup.asks_mid_call  # straight to the handshake era, not after a refusal
    assert "action=accept" in text(answered) and elicited == ["who are you?"]
    # A 2026-07-28 client's call stays in its era, where the classic server cannot ask mid-call.
    assert refused.is_error and "no back-channel" in text(refused)
