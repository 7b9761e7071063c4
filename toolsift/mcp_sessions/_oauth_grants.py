"""The grants a workload or an enterprise signs in with: the RFC 7523 JWT bearer grant, twice.

``jwt_bearer`` (workload identity federation): the client presents the JWT
its platform issued it (a Kubernetes service account token, a SPIFFE JWT-SVID)
as the grant; there is no client secret and no registration. The SDK has no
provider for it, so :class:`WorkloadJwtProvider` is its ``OAuthClientProvider``
(discovery, scopes, step-up) with the token request made the grant's way. The
JWT is read at each token request, so a rotated token file is picked up.

``identity_assertion`` (enterprise-managed authorization, SEP-990): the
person's ID token from the enterprise identity provider is exchanged there
(RFC 8693 token exchange) for an identity assertion (ID-JAG) naming the MCP
server, which the server's authorization server, configured and never
discovered, trades for an access token. The SDK's
``IdentityAssertionOAuthProvider`` does the second leg; :class:`IdentityAssertionExchange`
is the first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import final

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthTokenError, TokenStorage
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.shared.auth import JWT_BEARER_GRANT_TYPE, OAuthClientInformationFull, OAuthClientMetadata

from ..config._internal import OAuthConfig

__all__ = ["IdentityAssertionExchange", "WorkloadJwtProvider", "identity_assertion_flow", "workload_jwt_flow"]

TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
# The local record of a workload that named no client ID; never sent.
_WORKLOAD_RECORD = "workload"
_TIMEOUT = 30.0


@final
class WorkloadJwtProvider(OAuthClientProvider):
    """The SDK's OAuth flow, getting its token with the workload's JWT as an RFC 7523 grant.

    Args:
        server_url: The MCP server.
        storage: Where tokens live.
        read_assertion: Returns the workload's JWT as it is now.
        client_id: A client ID to send beside it, when the authorization server wants one.
        scope: Scopes to ask for.
    """

    def __init__(
        self,
        server_url: str,
        storage: TokenStorage,
        read_assertion: Callable[[], Awaitable[str]],
        client_id: str | None = None,
        scope: str | None = None,
    ) -> None:
        metadata = OAuthClientMetadata(
            redirect_uris=None, grant_types=[JWT_BEARER_GRANT_TYPE], token_endpoint_auth_method="none", scope=scope
        )
        super().__init__(server_url, metadata, storage)
        self._read_assertion = read_assertion
        self._client_id = client_id
        self._record = OAuthClientInformationFull(
            client_id=client_id or _WORKLOAD_RECORD,
            grant_types=[JWT_BEARER_GRANT_TYPE],
            token_endpoint_auth_method="none",
        )

    async def _initialize(self) -> None:
        # No registration: the JWT is the client's whole identity.
        self.context.current_tokens = await self.context.storage.get_tokens()
        self.context.client_info = self._record
        self._initialized = True

    async def _perform_authorization(self) -> httpx2.Request:
        data = {"grant_type": JWT_BEARER_GRANT_TYPE, "assertion": await self._read_assertion()}
        if self._client_id is not None:
            data["client_id"] = self._client_id
        if self.context.should_include_resource_param(self.context.protocol_version):
            data["resource"] = self.context.get_resource_url()
        if self.context.client_metadata.scope:
            data["scope"] = self.context.client_metadata.scope
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        return httpx2.Request("POST", self._get_token_endpoint(), data=data, headers=headers)


def workload_jwt_flow(
    auth: OAuthConfig, url: str, secrets: dict[str, str], storage: TokenStorage, base_dir: Path
) -> WorkloadJwtProvider:
    """The ``jwt_bearer`` flow of a server's ``auth``: the JWT from ``assertion``, or read from ``assertionFile``."""
    given = secrets.get("assertion")
    path = None if auth.assertion_file is None else Path(auth.assertion_file).expanduser()
    if path is not None and not path.is_absolute():
        path = base_dir / path

    async def read_assertion() -> str:
        if given is not None:
            return given
        assert path is not None  # the config holds one of the two
        try:
            return path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise OAuthTokenError(
                f"cannot read the workload's JWT from auth.assertionFile {str(path)!r}: {exc}"
            ) from exc

    client_id = secrets.get("clientId", auth.client_id)
    return WorkloadJwtProvider(url, storage, read_assertion, client_id, " ".join(auth.scopes) or None)


@final
class IdentityAssertionExchange:
    """The first leg of SEP-990: the person's ID token exchanged at the identity provider for an ID-JAG.

    Args:
        token_endpoint: The identity provider's token endpoint.
        client_id: This client's ID there.
        client_secret: Its secret there, if it has one.
        id_token: The person's ID token.
        scope: Scopes the ID-JAG should carry.
    """

    def __init__(
        self, token_endpoint: str, client_id: str, client_secret: str | None, id_token: str, scope: str | None
    ) -> None:
        self._endpoint = token_endpoint
        self._client_id, self._client_secret = client_id, client_secret
        self._id_token = id_token
        self._scope = scope

    async def __call__(self, audience: str, resource: str) -> str:
        """The ID-JAG for the authorization server ``audience`` and the MCP server ``resource``.

        Raises:
            OAuthTokenError: The identity provider refused, or answered with something else.
        """
        data = {
            "grant_type": TOKEN_EXCHANGE_GRANT,
            "requested_token_type": ID_JAG_TYPE,
            "subject_token": self._id_token,
            "subject_token_type": ID_TOKEN_TYPE,
            "audience": audience,
            "resource": resource,
            "client_id": self._client_id,
        }
        if self._client_secret is not None:
            data["client_secret"] = self._client_secret
        if self._scope:
            data["scope"] = self._scope
        async with httpx2.AsyncClient(timeout=_TIMEOUT) as http:
            response = await http.post(self._endpoint, data=data)
        if response.status_code != 200:
            raise OAuthTokenError(
                f"The identity provider refused the token exchange ({response.status_code}): {response.text[:500]}"
            )
        answer = response.json()
        token = answer.get("access_token") if isinstance(answer, dict) else None
        if not isinstance(token, str) or answer.get("issued_token_type", ID_JAG_TYPE) != ID_JAG_TYPE:
            raise OAuthTokenError("The identity provider's token exchange answer holds no identity assertion (ID-JAG)")
        return token


def identity_assertion_flow(
    auth: OAuthConfig, url: str, secrets: dict[str, str], storage: TokenStorage
) -> IdentityAssertionOAuthProvider:
    """The ``identity_assertion`` flow of a server's ``auth`` (validated: client, issuer and provider are set)."""
    provider = auth.identity_provider
    client_id = secrets.get("clientId", auth.client_id)
    assert provider is not None and auth.issuer is not None and client_id is not None
    scope = " ".join(auth.scopes) or None
    exchange = IdentityAssertionExchange(
        provider.token_endpoint,
        provider.client_id,
        secrets.get("identityProvider.clientSecret"),
        secrets["identityProvider.idToken"],
        scope,
    )
    post = auth.token_endpoint_auth_method == "client_secret_post"
    return IdentityAssertionOAuthProvider(
        url,
        storage,
        client_id,
        secrets["clientSecret"],
        auth.issuer,
        exchange,
        scope=scope,
        token_endpoint_auth_method="client_secret_post" if post else "client_secret_basic",
    )
