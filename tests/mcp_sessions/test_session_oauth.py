"""OAuth 2.1 against a real authorization server: the SDK's server-side OAuth in ``examples/servers/oauth_notes.py``.

Its authorization endpoint approves at once, so the sign-in handler here
follows the one redirect a browser would, and reads the code off it.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import mcp.types as types
import pytest
from mcp.shared.auth import AuthorizationCodeResult
from servers import http_server

from toolsift.config import ServerConfig
from toolsift.mcp_sessions import (
    ClientCallbacks,
    FileTokenStorage,
    McpSession,
    SessionOptions,
    SessionState,
    token_file,
)

pytestmark = pytest.mark.timeout(60)


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


def oauth(url: str, **auth: object) -> ServerConfig:
    return ServerConfig.model_validate({"url": url, "auth": auth}).with_name("notes")


def text(result: object) -> str:
    content = result.content
    return "".join(block.text for block in content if isinstance(block, types.TextContent))


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config"


async def test_a_person_signs_in_once_and_later_sessions_use_the_saved_tokens() -> None:
    browser = Browser()
    async with http_server("oauth_notes.py") as url:
        config = oauth(url)
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


async def test_without_tokens_or_a_sign_in_handler_the_session_names_the_command() -> None:
    async with http_server("oauth_notes.py") as url, McpSession(oauth(url)) as session:
        assert session.state is SessionState.ERROR
        assert session.reason == ("could not start: MCP server 'notes' needs you to sign in (OAuth): run "
                                  "`toolsift auth login notes`, then start again")


async def test_a_server_without_auth_that_answers_401_says_how_to_authorise() -> None:
    async with http_server("oauth_notes.py") as url, McpSession(ServerConfig(url=url).with_name("bare")) as session:
        assert session.state is SessionState.ERROR
        assert "HTTP 401 Unauthorized" in (session.reason or "")
        assert "wants an OAuth sign-in" in (session.reason or "") and "toolsift auth login" in (session.reason or "")
