"""How toolsift signs in to an HTTP server that asks for OAuth 2.1: a server's ``auth`` section."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ._model import ConfigModel
from ._setting_types import Expandable

__all__ = ["OAuthConfig"]


class OAuthConfig(ConfigModel):
    """How toolsift signs in to an HTTP server that asks for OAuth 2.1 (a server's ``auth``).

    Attributes:
        grant: ``authorization_code`` (a person signs in once in a browser, with
            PKCE; ``toolsift auth login SERVER``) or ``client_credentials`` (a
            service signs in with its own secret or private key, no person).
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
    """

    grant: Literal["authorization_code", "client_credentials"] = "authorization_code"
    client_id: Expandable | None = None
    client_secret: Expandable | None = None
    private_key: Expandable | None = None
    signing_algorithm: str = "RS256"
    scopes: tuple[str, ...] = ()
    client_metadata_url: str | None = None
    redirect_port: int = Field(default=33418, ge=1, le=65535)
    token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post", "none"] | None = None

    @model_validator(mode="after")
    def _check_grant(self) -> OAuthConfig:
        if self.grant == "client_credentials" and (
            self.client_id is None or (self.client_secret is None) == (self.private_key is None)
        ):
            raise ValueError("grant client_credentials needs clientId and one of clientSecret or privateKey")
        if self.private_key is not None and self.grant != "client_credentials":
            raise ValueError("privateKey signs client_credentials requests; set grant: client_credentials")
        return self
