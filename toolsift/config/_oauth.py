"""A server's ``auth``: how toolsift signs in to an HTTP server that asks for OAuth 2.1.

Four grants: a person in a browser (``authorization_code``), a service with its
own secret or key (``client_credentials``), a workload with the JWT its platform
gives it (``jwt_bearer``, workload identity federation), and a person's
enterprise sign-in exchanged for an identity assertion (``identity_assertion``,
enterprise-managed authorization, SEP-990). Secrets take the ``${VAR}`` and
``secret://`` forms and are resolved only at connect time.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ._model import ConfigModel
from ._setting_types import Expandable

__all__ = ["IdentityProviderConfig", "OAuthConfig"]

Grant = Literal["authorization_code", "client_credentials", "jwt_bearer", "identity_assertion"]


class IdentityProviderConfig(ConfigModel):
    """The enterprise identity provider of ``identity_assertion``: where the person's ID token is exchanged.

    Attributes:
        token_endpoint: The provider's token endpoint (RFC 8693 token exchange).
        client_id: This client's ID at the provider.
        client_secret: Its secret there, when the provider wants one (``${VAR}`` or ``secret://`` forms).
        id_token: The person's ID token from signing in to the provider (``${VAR}`` or ``secret://`` forms).
    """

    token_endpoint: str
    client_id: str
    client_secret: Expandable | None = None
    id_token: Expandable


class OAuthConfig(ConfigModel):
    """How toolsift signs in to an HTTP server that asks for OAuth 2.1 (a server's ``auth``).

    Attributes:
        grant: ``authorization_code`` (a person signs in once in a browser, with
            PKCE; ``toolsift auth login SERVER``), ``client_credentials`` (a
            service signs in with its own secret or private key, no person),
            ``jwt_bearer`` (a workload presents the JWT its platform issued it,
            RFC 7523; no client registration) or ``identity_assertion`` (a
            person's enterprise ID token is exchanged at the identity provider
            for an identity assertion, which the authorization server trades for
            a token; SEP-990).
        client_id: A client registered ahead of time with the authorization
            server (``${VAR}`` or ``secret://`` forms); without one, toolsift
            registers itself (dynamic client registration) or names itself by
            ``client_metadata_url``.
        client_secret: That client's secret (``${VAR}`` or ``secret://`` forms).
        private_key: A PEM private key: with ``client_credentials`` the client
            proves itself by a signed JWT (``private_key_jwt``) instead of a secret.
        signing_algorithm: The JWT's algorithm (``RS256``, ``ES256``, ...).
        scopes: Scopes to ask for; without them, those the server names.
        client_metadata_url: An HTTPS URL of this client's metadata document, used as
            its client ID where the authorization server accepts them.
        redirect_port: The loopback port the browser returns to after signing in.
        token_endpoint_auth_method: How the client authenticates at the token
            endpoint (``client_secret_basic``, ``client_secret_post`` or ``none``);
            by default the one the server supports.
        assertion: With ``jwt_bearer``, the workload's JWT (``${VAR}`` or ``secret://`` forms).
        assertion_file: With ``jwt_bearer``, a file holding it, read at each token
            request (platforms rotate these tokens).
        issuer: With ``identity_assertion``, the issuer of the server's
            authorization server: it is configured, never discovered, so the
            assertion goes only there.
        identity_provider: With ``identity_assertion``, the enterprise identity provider.
        dpop: Bind tokens to a key of this client (DPoP, RFC 9449): None (the
            default) when the authorization server offers it, True always, False never.
    """

    grant: Grant = "authorization_code"
    client_id: Expandable | None = None
    client_secret: Expandable | None = None
    private_key: Expandable | None = None
    signing_algorithm: str = "RS256"
    scopes: tuple[str, ...] = ()
    client_metadata_url: str | None = None
    redirect_port: int = Field(default=33418, ge=1, le=65535)
    token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post", "none"] | None = None
    assertion: Expandable | None = None
    assertion_file: str | None = None
    issuer: str | None = None
    identity_provider: IdentityProviderConfig | None = None
    dpop: bool | None = None

    @model_validator(mode="after")
    def _check_grant(self) -> OAuthConfig:
        problem = _GRANT_CHECKS[self.grant](self)
        if problem is not None:
            raise ValueError(problem)
        if self.private_key is not None and self.grant != "client_credentials":
            raise ValueError("privateKey signs client_credentials requests; set grant: client_credentials")
        if (self.assertion is not None or self.assertion_file is not None) and self.grant != "jwt_bearer":
            raise ValueError("assertion and assertionFile are the workload's JWT; set grant: jwt_bearer")
        return self


def _no_check(auth: OAuthConfig) -> str | None:
    return None


def _check_client_credentials(auth: OAuthConfig) -> str | None:
    if auth.client_id is None or (auth.client_secret is None) == (auth.private_key is None):
        return "grant client_credentials needs clientId and one of clientSecret or privateKey"
    return None


def _check_jwt_bearer(auth: OAuthConfig) -> str | None:
    if (auth.assertion is None) == (auth.assertion_file is None):
        return "grant jwt_bearer needs one of assertion (the workload's JWT) or assertionFile (a file holding it)"
    return None


def _check_identity_assertion(auth: OAuthConfig) -> str | None:
    missing = [
        key
        for key, value in (
            ("clientId", auth.client_id),
            ("clientSecret", auth.client_secret),
            ("issuer", auth.issuer),
            ("identityProvider", auth.identity_provider),
        )
        if value is None
    ]
    if missing:
        return f"grant identity_assertion needs {', '.join(missing)}"
    return None


_GRANT_CHECKS = {
    "authorization_code": _no_check,
    "client_credentials": _check_client_credentials,
    "jwt_bearer": _check_jwt_bearer,
    "identity_assertion": _check_identity_assertion,
}
