"""OAuth 2.1 against a real authorization server: the SDK's server-side OAuth in ``examples/servers/oauth_notes.py``.

Its authorization endpoint approves at once, so the sign-in handler here
follows the one redirect a browser would, and reads the code off it.
"""

from __future__ import annotations

import json
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import mcp.types as types
import pytest
from mcp.shared.auth import AuthorizationCodeResult, OAuthToken
from servers import http_server

from toolsift.config import HttpServer
from toolsift.mcp_sessions import ClientCallbacks, McpSession, SessionOptions
from toolsift.mcp_sessions._internal import FileTokenStorage, SessionState, token_file


class Browser:
    """Follows the authorization URL as a browser would and counts the sign-ins."""

    def __init__(self) -> None:
        self.signed_in: list[str] = []

    async def sign_in(self, server: str, url: str, redirect_uri: str) -> AuthorizationCodeResult:
        async with httpx2.AsyncClient() as http:
            response = await http.get(url, follow_redirects=False)
        location = response.headers["location"]
        assert location.startswith(redirect_uri)
        query = parse_qs(urlsplit(location).query)
        self.signed_in.append(server)
        return AuthorizationCodeResult(code=query["code"][0], state=query["state"][0])


def oauth(url: str, **auth: object) -> HttpServer:
    return HttpServer.model_validate({"url": url, "auth": auth}).with_name("notes")


def text(result: object) -> str:
    content = result.content
    return "".join(block.text for block in content if isinstance(block, types.TextContent))


@pytest.fixture(scope="module")
async def notes_url() -> AsyncIterator[str]:
    """One ``oauth_notes.py`` child for the module: each test signs in with its own tokens (its own
    ``config_home``) as a client of its own, and nothing checks what the server keeps of the others."""
    async with http_server("oauth_notes.py") as url:
        yield url


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config"


async def test_a_person_signs_in_once_and_later_sessions_use_the_saved_tokens(notes_url: str) -> None:
    browser = Browser()
    config = oauth(notes_url)
    options = SessionOptions(callbacks=ClientCallbacks(sign_in=browser.sign_in))
    async with McpSession(config, options=options) as session:
        assert session.state is SessionState.READY, session.reason
        client, scopes = text(await session.call_tool("whoami")).split(" ", 1)
    assert browser.signed_in == ["notes"] and scopes == "notes"
    path = token_file(config)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    saved = FileTokenStorage(path).saved_tokens()
    assert saved is not None and saved[0].refresh_token
    async with McpSession(config) as again:  # no sign-in handler: the saved tokens must do
        assert again.state is SessionState.READY, again.reason
        assert text(await again.call_tool("whoami")).startswith(client)  # the same registered client
    assert browser.signed_in == ["notes"]


async def test_a_url_from_a_variable_is_signed_in_to_at_the_resolved_address(
    monkeypatch: pytest.MonkeyPatch, notes_url: str
) -> None:
    browser = Browser()
    monkeypatch.setenv("TOOLSIFT_TEST_NOTES_URL", notes_url)
    config = oauth("${TOOLSIFT_TEST_NOTES_URL}")
    options = SessionOptions(callbacks=ClientCallbacks(sign_in=browser.sign_in))
    async with McpSession(config, options=options) as session:
        assert session.state is SessionState.READY, session.reason
    assert browser.signed_in == ["notes"]


async def test_expired_access_tokens_are_refreshed_without_a_sign_in() -> None:
    browser = Browser()
    async with http_server("oauth_notes.py", "--token-seconds", "60") as url:
        config = oauth(url)
        options = SessionOptions(callbacks=ClientCallbacks(sign_in=browser.sign_in))
        async with McpSession(config, options=options) as session:
            assert session.state is SessionState.READY, session.reason
        first = FileTokenStorage(token_file(config)).saved_tokens()
        assert first is not None
        # An hour passes (the file says so): the access token has expired, the refresh token has not.
        path = token_file(config)
        saved = json.loads(path.read_text())
        path.write_text(json.dumps({**saved, "savedAt": saved["savedAt"] - 3600}))
        async with McpSession(config) as again:
            assert again.state is SessionState.READY, again.reason
        second = FileTokenStorage(token_file(config)).saved_tokens()
    assert second is not None and second[0].access_token != first[0].access_token
    assert browser.signed_in == ["notes"]


async def test_without_tokens_or_a_sign_in_handler_the_session_names_the_command(notes_url: str) -> None:
    async with McpSession(oauth(notes_url)) as session:
        assert session.state is SessionState.ERROR
        assert session.reason == (
            "could not start: MCP server 'notes' needs you to sign in (OAuth): run "
            "`toolsift auth login notes`, then start again"
        )


async def test_a_server_without_auth_that_answers_401_says_how_to_authorise(notes_url: str) -> None:
    async with McpSession(HttpServer(url=notes_url).with_name("bare")) as session:
        assert session.state is SessionState.ERROR
        assert "HTTP 401 Unauthorized" in (session.reason or "")
        assert "wants an OAuth sign-in" in (session.reason or "") and "toolsift auth login" in (session.reason or "")


async def test_a_token_folder_others_may_read_is_narrowed_when_used(config_home: Path) -> None:
    path = token_file(oauth("https://notes.example/mcp"))
    path.parent.mkdir(parents=True, mode=0o755)
    path.parent.chmod(0o755)  # as an older release, or a person, left it
    path.write_text(json.dumps({"client": {"client_id": "c", "redirect_uris": ["http://127.0.0.1:1/callback"]}}))
    path.chmod(0o644)
    storage = FileTokenStorage(path)
    assert storage.saved_tokens() is None  # a read
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700 and stat.S_IMODE(path.stat().st_mode) == 0o600
    path.unlink()
    path.parent.chmod(0o755)
    await storage.set_tokens(OAuthToken(access_token="a", token_type="Bearer"))  # a write
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700 and stat.S_IMODE(path.stat().st_mode) == 0o600


async def test_a_client_id_from_a_variable_is_the_client_that_signs_in(
    monkeypatch: pytest.MonkeyPatch, notes_url: str
) -> None:
    browser = Browser()
    async with httpx2.AsyncClient() as http:  # a client registered ahead of time, as an administrator would
        registered = await http.post(
            notes_url.removesuffix("/mcp") + "/register",
            json={
                "redirect_uris": ["http://127.0.0.1:33418/callback"],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            },
        )
    client_id = registered.json()["client_id"]
    monkeypatch.setenv("NOTES_CLIENT_ID", client_id)
    options = SessionOptions(callbacks=ClientCallbacks(sign_in=browser.sign_in))
    async with McpSession(oauth(notes_url, clientId="${NOTES_CLIENT_ID}"), options=options) as session:
        assert session.state is SessionState.READY, session.reason
        # The server names the client it issued the token to; the session masks it, as any resolved reference.
        assert text(await session.call_tool("whoami")) == "[redacted] notes"
    async with McpSession(oauth(notes_url, clientId=client_id)) as again:  # the saved tokens: the same client
        assert again.state is SessionState.READY, again.reason
        assert text(await again.call_tool("whoami")) == f"{client_id} notes"
