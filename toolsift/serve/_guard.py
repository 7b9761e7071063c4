"""``HttpGuard``: the checks every HTTP request passes before it reaches MCP.

- **Origin**: a browser page may call the server only from the served origin
  itself (a loopback name with the port this connection reached) or from one
  listed in ``serve.allowedOrigins``; requests without ``Origin`` (every
  non-browser client) pass. This stops a web page the user visits, including
  one served by another program on this machine, from driving the user's tools.

The SDK's ``TransportSecuritySettings`` checks Host and Origin against lists
fixed when the app is built, but the port is often chosen at bind time
(``port: 0``, several workers), and a ``localhost:*`` entry would admit every
local program's pages. The served port is read from each connection's ASGI
scope instead, which also lets the refusals say what to configure.
- **Host** (when bound to loopback): the ``Host`` header must name this
  machine, which defeats DNS rebinding (a hostile name resolved to 127.0.0.1).
- **Bearer token** (when configured): compared in constant time; a missing or
  wrong token gets 401 with ``WWW-Authenticate: Bearer``. The health and
  readiness paths need none: load balancers probe them, and they tell nothing
  but whether the server is up.

Request bodies are bounded by the SDK's own limit (413), configured from
``serve.maxRequestBytes``. Refusals are JSON-RPC error objects, so MCP
clients show their message.
"""

from __future__ import annotations

import hmac
from collections.abc import Collection, Sequence
from typing import final
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .._net import is_loopback

__all__ = ["HttpGuard"]

_INVALID_REQUEST = -32600


def _hostname(authority: str) -> str | None:
    try:
        return urlsplit(f"//{authority}").hostname
    except ValueError:
        return None


@final
class HttpGuard:
    """ASGI middleware: Origin, Host and bearer-token checks.

    Args:
        app: The MCP app behind it.
        token: The bearer token to require; None: none required.
        allowed_origins: Origins allowed besides loopback ones; ``scheme://host:*`` allows any port.
        check_host: Require a loopback ``Host`` header (set when bound to loopback).
        open_paths: Paths served without the token (health probes).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None = None,
        allowed_origins: Sequence[str] = (),
        check_host: bool = True,
        open_paths: Collection[str] = (),
    ) -> None:
        self._app = app
        self._open_paths = frozenset(open_paths)
        self._token = token.encode("utf-8") if token is not None else None
        self._origins = frozenset(allowed_origins)
        self._any_port = tuple(origin[:-1] for origin in allowed_origins if origin.endswith(":*"))
        self._check_host = check_host

    def origin_allowed(self, origin: str, served_port: int | None) -> bool:
        """Whether a browser page from ``origin`` may call the server listening on ``served_port``."""
        if origin in self._origins:
            return True
        for prefix in self._any_port:
            if origin.startswith(prefix) and origin[len(prefix) :].isdigit():
                return True
        try:
            parts = urlsplit(origin)
            port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
        except ValueError:
            return False
        return (
            parts.scheme in ("http", "https")
            and parts.hostname is not None
            and is_loopback(parts.hostname)
            and served_port is not None
            and port == served_port
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        server = scope.get("server")
        refusal = self._refusal(headers, server[1] if server else None, scope["path"] in self._open_paths)
        if refusal is None:
            await self._app(scope, receive, send)
            return
        status, message = refusal
        extra = {"WWW-Authenticate": 'Bearer realm="toolsift"'} if status == 401 else None
        body = {"jsonrpc": "2.0", "id": None, "error": {"code": _INVALID_REQUEST, "message": message}}
        await JSONResponse(body, status_code=status, headers=extra)(scope, receive, send)

    def _refusal(self, headers: Headers, served_port: int | None, open_path: bool) -> tuple[int, str] | None:
        origin = headers.get("origin")
        if origin is not None and not self.origin_allowed(origin, served_port):
            return 403, (
                f"Origin {origin!r} is not allowed; only this server's own origin (a loopback name, port "
                f"{served_port}) may call it unless listed in serve.allowedOrigins"
            )
        if self._check_host:
            host = headers.get("host", "")
            name = _hostname(host)
            if name is None or not is_loopback(name):
                return 421, (
                    f"Host {host!r} is not a loopback name; this server listens on loopback only "
                    "(DNS rebinding protection)"
                )
        if self._token is not None and not open_path:
            scheme, _, credentials = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(credentials.strip().encode("utf-8"), self._token):
                return 401, "Missing or wrong bearer token; send 'Authorization: Bearer <token>'"
        return None
