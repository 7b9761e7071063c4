"""Other clients' OAuth blocks, carried into toolsift's ``auth`` (see ``OAuthConfig``).

What each client writes, and what it becomes:

- Cursor: ``"auth": {"CLIENT_ID", "CLIENT_SECRET", "scopes": [...]}`` ->
  ``clientId``, ``clientSecret``, ``scopes``.
- Claude Code: ``"oauth": {"clientId", "callbackPort", "scopes": "a b"}`` ->
  ``clientId``, ``redirectPort``, ``scopes`` (its space-separated string split).
- Gemini CLI: ``"oauth": {"enabled", "clientId", "clientSecret", "scopes",
  "redirectUri"}``; ``enabled: false`` means no OAuth; a loopback
  ``redirectUri`` ending in ``/callback`` gives ``redirectPort``.
- toolsift's own keys (``clientId``, ``grant``, ``redirectPort``, ...) are
  taken as written, in any client's file.

A key with no toolsift meaning (an authorization or token endpoint: toolsift
discovers them from the server's metadata; an audience; a redirect address
toolsift cannot listen on) is left out with a warning at that key, and the
rest of the block still applies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, final
from urllib.parse import urlsplit

from .._json_lines import Loc
from .._model import key_spellings
from .._oauth import OAuthConfig

__all__ = ["OAuthBlock", "read_oauth_block"]

# Client key -> toolsift's key, where only the spelling differs.
_RENAMED = {"CLIENT_ID": "clientId", "CLIENT_SECRET": "clientSecret", "callbackPort": "redirectPort"}
_DISCOVERED = (
    "ignored: toolsift finds the authorization server's endpoints in the server's own metadata "
    "(RFC 9728, RFC 8414); no endpoint is configured"
)
_ENDPOINTS = frozenset({"authorizationUrl", "tokenUrl", "authServerMetadataUrl", "registrationUrl", "issuer"})
_LOOPBACK = frozenset({"127.0.0.1", "localhost"})
_KNOWN = ", ".join(sorted({field.alias or name for name, field in OAuthConfig.model_fields.items()}))


@final
@dataclass
class OAuthBlock:
    """One OAuth block in toolsift's keys.

    Attributes:
        auth: The ``auth`` value to validate, or None when the block turns OAuth off.
        notes: Warnings, as (location inside the block, message).
        origins: Key in :attr:`auth` -> the key the block wrote it as, where they differ.
    """

    auth: dict[str, Any] | None
    notes: list[tuple[Loc, str]] = field(default_factory=list)
    origins: dict[str, str] = field(default_factory=dict)


def _redirect_port(uri: Any) -> int | None:
    """The port of a loopback ``http://HOST:PORT/callback`` address, the only kind toolsift listens on."""
    if not isinstance(uri, str):
        return None
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme == "http" and parts.hostname in _LOOPBACK and parts.path == "/callback":
        return port
    return None


def read_oauth_block(block: Mapping[str, Any]) -> OAuthBlock:
    """``block`` (a client's ``auth`` or ``oauth`` object) as toolsift's ``auth``."""
    if block.get("enabled") is False:
        return OAuthBlock(None)
    spellings = key_spellings(OAuthConfig)
    auth: dict[str, Any] = {}
    out = OAuthBlock(auth)
    for key, value in block.items():
        target = _RENAMED.get(key, key)
        if key == "enabled" and isinstance(value, bool):
            continue
        if key == "redirectUri":
            target, value = "redirectPort", _redirect_port(value)
            if value is None:
                out.notes.append(
                    (
                        (key,),
                        "ignored: toolsift takes the redirect at http://127.0.0.1:<redirectPort>"
                        "/callback; set redirectPort and register that address",
                    )
                )
                continue
        elif key in _ENDPOINTS:
            out.notes.append(((key,), _DISCOVERED))
            continue
        elif target not in spellings:
            out.notes.append(((key,), f"ignored: {key!r} has no meaning in toolsift's auth ({_KNOWN})"))
            continue
        elif spellings[target] == "scopes" and isinstance(value, str):
            value = value.split()  # Claude Code: one space-separated string
        if target in auth:
            out.notes.append(((key,), f"ignored: {out.origins.get(target, target)!r} gives this setting already"))
            continue
        auth[target] = value
        if target != key:
            out.origins[target] = key
    return out
