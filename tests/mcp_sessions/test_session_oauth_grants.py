"""What a workload or enterprise sign-in says when its own part fails, against the real ``oauth_notes.py``.

The flows themselves (a workload's JWT as the grant, an enterprise ID token exchanged for an
identity assertion, DPoP-bound tokens and nonces) run against the official conformance suite
in ``tests/serve/test_serve_conformance.py``; the example server offers none of them, so here
it is the authorization server that the client reaches before its own part fails.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from servers import http_server

from toolsift.config import HttpServer
from toolsift.mcp_sessions import McpSession
from toolsift.mcp_sessions._internal import SessionState


@pytest.fixture(scope="module")
async def notes_url() -> AsyncIterator[str]:
    async with http_server("oauth_notes.py") as url:
        yield url


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def server(url: str, **auth: Any) -> HttpServer:
    return HttpServer.model_validate({"url": url, "auth": auth}).with_name("notes")


async def test_a_workload_jwt_file_that_cannot_be_read_is_named(notes_url: str, tmp_path: Path) -> None:
    missing = tmp_path / "token"
    async with McpSession(server(notes_url, grant="jwt_bearer", assertionFile=str(missing))) as session:
        assert session.state is SessionState.ERROR
        assert f"cannot read the workload's JWT from auth.assertionFile {str(missing)!r}" in (session.reason or "")


async def test_an_identity_provider_that_refuses_the_exchange_is_reported(notes_url: str) -> None:
    origin = notes_url.removesuffix("/mcp")
    config = server(
        notes_url,
        grant="identity_assertion",
        clientId="app",
        clientSecret="s",
        issuer=origin,
        # The example's own token endpoint stands in for an identity provider: it knows no token exchange.
        identityProvider={"tokenEndpoint": f"{origin}/token", "clientId": "idp-app", "idToken": "id-token"},
    )
    async with McpSession(config) as session:
        assert session.state is SessionState.ERROR
        assert "The identity provider refused the token exchange (" in (session.reason or "")
