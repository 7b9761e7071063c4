"""An MCP server behind OAuth 2.1, with its own authorization server that approves every sign-in at once.

It is the SDK's own server-side OAuth: protected resource metadata, authorization
server metadata, dynamic client registration, the authorization endpoint with
PKCE, the token endpoint with refresh, and bearer checks on ``/mcp``. The
authorization endpoint needs no person: it redirects straight back with a code,
so a client can sign in headless by following that one redirect, as a browser
would after a person clicked "allow".

Run it::

    python examples/servers/oauth_notes.py [--port N] [--ready-file PATH] [--token-seconds N]

Flags:
    --port N            TCP port on 127.0.0.1; 0 (the default) picks a free one.
    --ready-file PATH   once the server accepts connections, write its URL to PATH.
    --token-seconds N   lifetime of access tokens (default 3600); a short one makes
                        clients refresh.
    --http              accepted for uniformity with the other examples; this
                        server always speaks HTTP.

Tools: ``note_add(title, body)`` and ``whoami()`` (the client ID the access token
was issued to, and its scopes).
"""

from __future__ import annotations

import argparse
import secrets
import time

from _http import HOST, add_http_arguments, bind_loopback, serve_http
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

SCOPES = ["notes"]


class ApproveEverything(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    """An in-memory authorization server that says yes to every registered client."""

    def __init__(self, token_seconds: int) -> None:
        self.token_seconds = token_seconds
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or SCOPES,
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(authorization_code.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes, None)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        return found if found is not None and (found.expires_at or 0) > time.time() else None

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires = int(time.time()) + self.token_seconds
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.token_seconds,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )


def build(base: str, token_seconds: int) -> MCPServer:
    """The server for ``base`` (``http://127.0.0.1:PORT``): its own issuer and protected resource."""
    settings = AuthSettings(
        issuer_url=base,
        resource_server_url=f"{base}/mcp",
        required_scopes=SCOPES,  # type: ignore[arg-type]
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES, default_scopes=SCOPES),
    )
    mcp = MCPServer(
        "oauth-notes",
        version="0.1.0",
        instructions="Notes behind OAuth.",
        log_level="WARNING",
        auth=settings,
        auth_server_provider=ApproveEverything(token_seconds),
    )
    notes: dict[str, str] = {}

    @mcp.tool()
    def note_add(title: str, body: str) -> str:
        """Save a note under a title."""
        notes[title] = body
        return f"saved {title!r}"

    @mcp.tool()
    def whoami() -> str:
        """The client the access token was issued to, and its scopes."""
        token = get_access_token()
        return f"{token.client_id} {' '.join(token.scopes)}" if token is not None else "nobody"

    return mcp


def main() -> None:
    parser = argparse.ArgumentParser(description="An MCP server behind OAuth 2.1 that approves every sign-in.")
    add_http_arguments(parser)
    parser.add_argument("--token-seconds", type=int, default=3600, help="lifetime of access tokens")
    args = parser.parse_args()
    sock = bind_loopback(args.port)
    server = build(f"http://{HOST}:{sock.getsockname()[1]}", args.token_seconds)
    serve_http(server.streamable_http_app(), ready_file=args.ready_file, sock=sock)


if __name__ == "__main__":
    main()
