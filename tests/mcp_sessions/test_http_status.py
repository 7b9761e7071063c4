"""HTTP refusals read as what they are: the status, what the server asked for, and how to authorise."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
from serve_project import served_http, write_project

from toolsift.config import HttpServer
from toolsift.mcp_sessions import McpSession
from toolsift.mcp_sessions._http_status import explain_http_errors
from toolsift.mcp_sessions._internal import SessionState

REQUEST = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}).encode()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_server_that_wants_a_token_says_http_401_and_how_to_authorise(tmp_path: Path, mode: str) -> None:
    config = write_project(tmp_path, serve={"token": "s3cret"})
    async with (
        served_http(config) as (url, _),
        McpSession(HttpServer(url=url, protocol=mode).with_name("remote")) as session,
    ):
        assert session.state is SessionState.ERROR
        error = session.status().error or ""
    assert f"HTTP 401 Unauthorized from {url}" in error
    assert 'it asks for: Bearer realm="toolsift"' in error
    assert '"Authorization": "Bearer ${TOKEN}"' in error
    assert "the server said: Missing or wrong bearer token" in error
    assert "s3cret" not in error


async def answer(
    status: int, body: bytes, content_type: str, *, sent: dict[str, str] | None = None, **headers: str
) -> dict[str, object] | bytes:
    request = httpx2.Request("POST", "http://mcp.example/mcp", content=REQUEST, headers=sent)
    response = httpx2.Response(
        status, headers={"content-type": content_type, **headers}, stream=httpx2.ByteStream(body), request=request
    )
    await explain_http_errors()(response)
    data = await response.aread()
    return json.loads(data) if response.headers["content-type"] == "application/json" and data else data


async def test_forbidden_with_an_oauth_error_names_it() -> None:
    reply = await answer(
        403,
        b'{"error": "insufficient_scope", "error_description": "needs repo"}',
        "application/json",
        **{"www-authenticate": 'Bearer scope="repo"'},
    )
    assert isinstance(reply, dict) and reply["id"] == 7
    error = reply["error"]
    assert isinstance(error, dict) and error["data"] == {"httpStatus": 403}
    assert error["message"] == (
        "HTTP 403 Forbidden from http://mcp.example/mcp: the server refused the credentials "
        'it was given; it asks for: Bearer scope="repo"; check the token, its scopes and '
        "the server's access rules (the server said: insufficient_scope: needs repo)"
    )


async def test_a_failure_in_plain_text_keeps_its_status_and_words() -> None:
    reply = await answer(502, b"upstream down", "text/plain")
    assert isinstance(reply, dict) and isinstance(reply["error"], dict)
    assert reply["error"]["message"] == (
        "HTTP 502 Bad Gateway from http://mcp.example/mcp: the server failed to "
        "answer the request (the server said: upstream down)"
    )


@pytest.mark.parametrize(
    ("status", "content_type", "session"),
    [
        (404, "text/plain", True),
        (404, "application/json", False),
        (400, "application/json", False),
        (200, "text/plain", False),
    ],
)
async def test_answers_the_sdk_reads_itself_pass_unchanged(status: int, content_type: str, session: bool) -> None:
    body = b'{"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "bad"}}'
    reply = await answer(status, body, content_type, sent={"mcp-session-id": "s1"} if session else None)
    assert reply == (json.loads(body) if content_type == "application/json" else body)


async def test_a_404_before_a_session_asks_whether_the_url_is_an_mcp_endpoint() -> None:
    reply = await answer(404, b"Not Found", "text/plain")
    assert isinstance(reply, dict) and reply["error"] == {
        "code": -32601,
        "message": "the URL http://mcp.example/mcp answered 404 Not Found: is it an MCP endpoint? "
        "(MCP servers are usually served at a path such as /mcp)",
        "data": {"httpStatus": 404},
    }


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_url_that_is_not_an_mcp_endpoint_says_so(tmp_path: Path, mode: str) -> None:
    config = write_project(tmp_path)
    async with served_http(config) as (url, _):
        wrong = url.rstrip("/").rsplit("/", 1)[0] + "/not-mcp"
        async with McpSession(HttpServer(url=wrong, protocol=mode).with_name("remote")) as session:
            assert session.state is SessionState.ERROR
            error = session.status().error or ""
    assert f"could not start: the URL {wrong} answered 404 Not Found: is it an MCP endpoint?" in error
    assert "-32601" not in error
