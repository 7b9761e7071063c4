"""OAuth 2.1 for HTTP servers: the SDK's providers, fed from a server's ``auth`` and a token file per server.

The SDK's ``OAuthClientProvider`` (an ``httpx.Auth``) does the protocol:
discovery of the protected resource and authorization server metadata, dynamic
client registration or a client ID metadata document, PKCE, scope selection
and step-up on ``403 insufficient_scope``, refresh. Here it gets what the
config says: the grant, a pre-registered client, the scopes, and where tokens
live. Tokens and the registered client are kept in one JSON file per server
under ``$XDG_CONFIG_HOME/toolsift/oauth/`` that only the user can read, so a
sign-in (``toolsift auth login SERVER``) serves every later process.

A person signs in only for the ``authorization_code`` grant, through
:attr:`ClientCallbacks.sign_in`; without one, a server that needs it fails to
connect with :class:`SignInRequired`, whose message gives the command.
"""

from __future__ import annotations

import hashlib
import json
import stat
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from .._exceptions import SignInRequired
from .._files import write_atomically
from .._folders import user_folder
from ..config import HttpServer, ServerConfig
from ..config._internal import OAuthConfig
from ._callbacks import SignInHandler
from ._dpop import DPoPAuth
from ._endpoint import Endpoint, HttpEndpoint
from ._oauth_grants import identity_assertion_flow, workload_jwt_flow

__all__ = ["FileTokenStorage", "oauth_provider", "sign_in_flow", "token_file"]

CLIENT_NAME = "toolsift"
# Only the user may list the token folder or read a token file.
FOLDER_MODE, FILE_MODE = 0o700, 0o600


def token_file(config: HttpServer) -> Path:
    """Where ``config``'s tokens live: one file per server name and URL, under the user's config folder."""
    digest = hashlib.sha256(config.url.encode()).hexdigest()[:12]
    return user_folder() / "oauth" / f"{config.name}-{digest}.json"


class FileTokenStorage:
    """The SDK's ``TokenStorage`` in a JSON file only the user may read (0600, in a 0700 folder).

    A folder or file that others may read (made by hand, or by an older
    release with the umask's 0755) is narrowed to those modes whenever the
    storage reads or writes it.

    Args:
        path: The file.
        preregistered: The client to use when the file holds none (a ``clientId`` in the config).
    """

    def __init__(self, path: Path, preregistered: OAuthClientInformationFull | None = None) -> None:
        self.path = path
        self._preregistered = preregistered

    def _private(self) -> None:
        """Take away every permission of others on the folder and the file, where they have any."""
        for path, mode in ((self.path.parent, FOLDER_MODE), (self.path, FILE_MODE)):
            try:
                info = path.lstat()
            except FileNotFoundError:
                continue
            current = stat.S_IMODE(info.st_mode)
            if not stat.S_ISLNK(info.st_mode) and current & ~mode:  # a link's target is not the store's to change
                path.chmod(current & mode)

    def _read(self) -> dict[str, Any]:
        self._private()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, key: str, value: dict[str, Any]) -> None:
        self._replace({**self._read(), key: value})

    def _replace(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
        self._private()  # mkdir leaves an existing folder's mode as it was
        write_atomically(self.path, json.dumps(data), what="the sign-in token store")  # private (0600), as tokens want

    def saved_tokens(self) -> tuple[OAuthToken, datetime] | None:
        """The tokens as they were issued and when they were saved, or None."""
        data = self._read()
        tokens = data.get("tokens")
        if not tokens:
            return None
        return OAuthToken.model_validate(tokens), datetime.fromtimestamp(data.get("savedAt", 0), UTC)

    def forget_tokens(self) -> None:
        """Drop the tokens and keep the client registration, so that the next connection signs in again."""
        data = self._read()
        if data.pop("tokens", None) is not None:
            self._replace(data)

    async def get_tokens(self) -> OAuthToken | None:
        """The tokens, their ``expires_in`` counted from now: the SDK takes it as the time left."""
        saved = self.saved_tokens()
        if saved is None:
            return None
        tokens, when = saved
        if tokens.expires_in is None:
            return tokens
        left = tokens.expires_in - int(time.time() - when.timestamp())
        return tokens.model_copy(update={"expires_in": max(left, 0)})

    async def set_tokens(self, tokens: OAuthToken) -> None:
        data = {**self._read(), "tokens": tokens.model_dump(mode="json", exclude_none=True), "savedAt": time.time()}
        self._replace(data)

    def dpop_state(self) -> dict[str, str]:
        """The DPoP key (PEM) and the digest of the token bound to it, as :class:`DPoPAuth` saved them."""
        state = self._read().get("dpop")
        return {str(k): str(v) for k, v in state.items()} if isinstance(state, dict) else {}

    def set_dpop_state(self, state: dict[str, str]) -> None:
        self._write("dpop", state)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        client = self._read().get("client")
        return OAuthClientInformationFull.model_validate(client) if client else self._preregistered

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._write("client", client_info.model_dump(mode="json", exclude_none=True))


def sign_in_flow(config: ServerConfig, endpoint: Endpoint, sign_in: SignInHandler | None) -> httpx2.Auth | None:
    """The OAuth flow that signs the requests of an HTTP server with ``auth``; None for any other server."""
    match config, endpoint:
        case HttpServer(auth=OAuthConfig() as auth), HttpEndpoint(url=url, auth_secrets=secrets):
            return oauth_provider(config, auth, url, dict(secrets), sign_in)
    return None


def oauth_provider(
    config: HttpServer, auth: OAuthConfig, url: str, secrets: dict[str, str], sign_in: SignInHandler | None
) -> httpx2.Auth:
    """The SDK auth flow for ``config``, signing in as its ``auth`` says, with DPoP where it binds tokens.

    Args:
        config: The server; its name and its URL as written key the token file.
        auth: Its ``auth`` block.
        url: Its URL, resolved: the resource the tokens are for.
        secrets: Its resolved ``auth`` secrets (``clientId``, ``clientSecret``, ``privateKey``, ...).
        sign_in: Who has a person sign in (authorization code grant); None fails with :class:`SignInRequired`.
    """
    store = FileTokenStorage(token_file(config))
    flow: httpx2.Auth
    match auth.grant:
        case "client_credentials":
            flow = _client_credentials(auth, url, secrets, store)
        case "jwt_bearer":
            flow = workload_jwt_flow(auth, url, secrets, store, config.base_dir)
        case "identity_assertion":
            flow = identity_assertion_flow(auth, url, secrets, store)
        case "authorization_code":
            flow = _authorization_code(config, auth, url, secrets, sign_in)
    return flow if auth.dpop is False else DPoPAuth(flow, store, always=auth.dpop is True)


def _client_credentials(
    auth: OAuthConfig, url: str, secrets: dict[str, str], store: FileTokenStorage
) -> OAuthClientProvider:
    scope = " ".join(auth.scopes) or None
    secret, key = secrets.get("clientSecret"), secrets.get("privateKey")
    client_id = secrets.get("clientId", auth.client_id)
    assert client_id is not None
    if key is not None:
        signer = SignedJWTParameters(
            issuer=client_id, subject=client_id, signing_key=key, signing_algorithm=auth.signing_algorithm
        )
        return PrivateKeyJWTOAuthProvider(url, store, client_id, signer.create_assertion_provider(), scope=scope)
    assert secret is not None
    post = auth.token_endpoint_auth_method == "client_secret_post"
    return ClientCredentialsOAuthProvider(
        url,
        store,
        client_id,
        secret,
        scope=scope,
        token_endpoint_auth_method="client_secret_post" if post else "client_secret_basic",
    )


def _authorization_code(
    config: HttpServer, auth: OAuthConfig, url: str, secrets: dict[str, str], sign_in: SignInHandler | None
) -> OAuthClientProvider:
    scope = " ".join(auth.scopes) or None
    secret = secrets.get("clientSecret")
    client_id = secrets.get("clientId", auth.client_id)
    redirect_uri = f"http://127.0.0.1:{auth.redirect_port}/callback"
    metadata = OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        scope=scope,
        token_endpoint_auth_method=auth.token_endpoint_auth_method or ("client_secret_basic" if secret else "none"),
    )
    store = FileTokenStorage(token_file(config), _preregistered(client_id, secret, metadata))
    handoff = _SignIn(config.name, redirect_uri, sign_in)
    return _SavedTokensProvider(
        url,
        metadata,
        store,
        redirect_handler=handoff.redirect,
        callback_handler=handoff.callback,
        client_metadata_url=auth.client_metadata_url,
    )


class _SavedTokensProvider(OAuthClientProvider):
    """The SDK's provider, told when tokens loaded from the file expire, so that it refreshes them.

    The SDK learns an expiry only from a token response; tokens it loads from
    storage count as valid until the server answers 401, which starts a whole
    new sign-in. With the time left known (``FileTokenStorage.get_tokens``), an
    expired access token is refreshed first, and a person signs in again only
    when the refresh token is refused too.
    """

    async def _initialize(self) -> None:
        await super()._initialize()
        if self.context.current_tokens is not None:
            self.context.update_token_expiry(self.context.current_tokens)


def _preregistered(
    client_id: str | None, secret: str | None, metadata: OAuthClientMetadata
) -> OAuthClientInformationFull | None:
    if client_id is None:
        return None
    return OAuthClientInformationFull(
        client_id=client_id, client_secret=secret, **metadata.model_dump(exclude_none=True)
    )


class _SignIn:
    """Carries the authorization URL from the SDK's redirect hook to its callback hook, through ``sign_in``."""

    def __init__(self, server: str, redirect_uri: str, sign_in: SignInHandler | None) -> None:
        self._server, self._redirect_uri, self._sign_in = server, redirect_uri, sign_in
        self._url: str | None = None

    async def redirect(self, url: str) -> None:
        if self._sign_in is None:
            raise SignInRequired(self._server)
        self._url = url

    async def callback(self) -> AuthorizationCodeResult:
        assert self._sign_in is not None and self._url is not None  # redirect() ran first
        return await self._sign_in(self._server, self._url, self._redirect_uri)
