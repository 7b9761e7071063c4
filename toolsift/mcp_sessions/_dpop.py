"""DPoP-bound tokens (RFC 9449, SEP-1932) around any of the SDK's OAuth flows, which know only bearer tokens.

:class:`DPoPAuth` wraps an OAuth flow (an ``httpx2.Auth``) and watches what it
sends and receives:

- authorization server metadata that offers DPoP (``dpop_signing_alg_values_supported``
  with ES256), or any, when DPoP is asked for always: its token endpoint is noted;
- a request to a noted token endpoint gets a proof, so the server may bind the
  token to this client's key; a token answered as ``token_type: DPoP`` is
  remembered as bound, and handed to the SDK as the bearer token it can parse;
- a request carrying a bound token presents it as ``Authorization: DPoP`` with a
  fresh proof (the token's hash, the body's digest);
- a server that answers ``use_dpop_nonce`` with a ``DPoP-Nonce`` (the token
  endpoint with 400, the MCP server with 401) gets the request once more with
  that nonce, before the SDK sees the refusal (it would start a new sign-in).

The key and which token is bound are kept in the server's token store, so a
later process can use saved tokens.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any, Literal, Protocol, final

import httpx2

from ._dpop_proof import DPOP_ALGORITHM, DPoPKey, proof_target

__all__ = ["DPoPAuth", "DPoPStore"]

_USE_NONCE = "use_dpop_nonce"


class DPoPStore(Protocol):
    """Where a server's DPoP key and bound token are kept (the token store)."""

    def dpop_state(self) -> dict[str, str]:
        """What :meth:`set_dpop_state` saved, or an empty dict."""
        ...

    def set_dpop_state(self, state: dict[str, str]) -> None: ...


@dataclass(frozen=True)
class _Signed:
    """A request that went out with a proof: to the token endpoint, or with a bound token to the server."""

    kind: Literal["token", "resource"]
    access_token: str | None = None


def _origin(url: httpx2.URL) -> str:
    return f"{url.scheme}://{url.netloc.decode()}"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def _json(response: httpx2.Response) -> dict[str, Any] | None:
    try:
        data = json.loads(await response.aread())
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


@final
class DPoPAuth(httpx2.Auth):
    """``inner``'s OAuth flow, with DPoP proofs where the authorization server binds tokens to a key.

    Args:
        inner: The SDK's OAuth flow.
        store: Keeps the key and which token is bound.
        always: Send proofs to every token endpoint found, whether or not its metadata offers DPoP.
    """

    requires_request_body = True

    def __init__(self, inner: httpx2.Auth, store: DPoPStore, *, always: bool = False) -> None:
        self._inner = inner
        self._store = store
        self._always = always
        self._token_endpoints: set[str] = set()
        self._nonces: dict[str, str] = {}  # origin -> the nonce its server last handed out
        self._state: dict[str, str] | None = None  # the store's, read once
        self._loaded: DPoPKey | None = None

    def _saved(self) -> dict[str, str]:
        if self._state is None:
            self._state = dict(self._store.dpop_state())
            if "key" not in self._state:
                self._state = {"key": DPoPKey.generate().to_pem()}
                self._store.set_dpop_state(self._state)
        return self._state

    def _key(self) -> DPoPKey:
        if self._loaded is None:
            self._loaded = DPoPKey.from_pem(self._saved()["key"])
        return self._loaded

    def _is_bound(self, token: str) -> bool:
        return self._saved().get("boundToken") == _digest(token)

    def _bind(self, token: str | None) -> None:
        self._state = {"key": self._saved()["key"]}
        if token is not None:
            self._state["boundToken"] = _digest(token)
        self._store.set_dpop_state(self._state)

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        await request.aread()
        flow = self._inner.async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                signed = self._sign(outgoing)
                response = yield outgoing
                if signed is not None and await self._asks_for_nonce(signed, response):
                    self._sign(outgoing)
                    response = yield outgoing
                outgoing = await flow.asend(await self._observe(outgoing, signed, response))
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def _sign(self, request: httpx2.Request) -> _Signed | None:
        """Put a fresh proof on ``request`` where it needs one; what kind, or None."""
        url = str(request.url)
        nonce = self._nonces.get(_origin(request.url))
        if request.method == "POST" and proof_target(url) in self._token_endpoints:
            request.headers["DPoP"] = self._key().proof("POST", url, nonce=nonce)
            return _Signed("token")
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() not in ("bearer", "dpop") or not token or not self._is_bound(token):
            return None
        request.headers["Authorization"] = f"DPoP {token}"
        body = request.content if request.method == "POST" else None
        request.headers["DPoP"] = self._key().proof(request.method, url, access_token=token, nonce=nonce, body=body)
        return _Signed("resource", token)

    async def _asks_for_nonce(self, signed: _Signed, response: httpx2.Response) -> bool:
        """Whether ``response`` refuses the proof for want of the nonce it hands out (noted for the retry)."""
        nonce = response.headers.get("DPoP-Nonce")
        if not nonce:
            return False
        self._nonces[_origin(response.request.url)] = nonce
        if signed.kind == "resource":
            return response.status_code == 401 and _USE_NONCE in response.headers.get("WWW-Authenticate", "")
        return response.status_code == 400 and ((await _json(response)) or {}).get("error") == _USE_NONCE

    async def _observe(self, request: httpx2.Request, signed: _Signed | None, response: httpx2.Response) -> Any:
        """Learn from ``response`` (nonces, token endpoints, bound tokens); the response the SDK should see."""
        if nonce := response.headers.get("DPoP-Nonce"):
            self._nonces[_origin(response.request.url)] = nonce
        if request.method == "GET" and "/.well-known/" in request.url.path and response.status_code == 200:
            await self._note_token_endpoint(response)
        elif signed is not None and signed.kind == "token" and response.status_code == 200:
            return await self._take_token(response)
        return response

    async def _note_token_endpoint(self, response: httpx2.Response) -> None:
        metadata = await _json(response)
        if metadata is None or not isinstance(endpoint := metadata.get("token_endpoint"), str):
            return
        offered = metadata.get("dpop_signing_alg_values_supported")
        if self._always or (isinstance(offered, list) and DPOP_ALGORITHM in offered):
            self._token_endpoints.add(proof_target(endpoint))

    async def _take_token(self, response: httpx2.Response) -> httpx2.Response:
        """Remember whether the token is bound; a bound one is handed on as the bearer token the SDK parses."""
        token = await _json(response)
        if token is None or not isinstance(token.get("access_token"), str):
            return response
        bound = str(token.get("token_type", "")).lower() == "dpop"
        self._bind(token["access_token"] if bound else None)
        if not bound:
            return response
        headers = [
            (name, value)
            for name, value in response.headers.multi_items()
            if name.lower() not in ("content-length", "content-encoding", "transfer-encoding")
        ]
        body = json.dumps({**token, "token_type": "Bearer"}).encode()
        return httpx2.Response(response.status_code, headers=headers, content=body, request=response.request)
