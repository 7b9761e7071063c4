"""DPoP proofs (RFC 9449): a key of this client, and the signed JWT that shows a request comes from its holder.

A proof names the request it goes with (method and URL without query or
fragment), when it was made, a unique ``jti``, and, when it goes with an access
token, the token's hash (``ath``). Sent to an MCP server it also carries the
body's digest (``content_digest``, the MCP profile of DPoP), so that a proof
cannot be replayed with another JSON-RPC message. A server that wants fresher
proofs hands out a nonce, which the next proofs to it carry.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from typing import Any, final
from urllib.parse import urlsplit, urlunsplit

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

__all__ = ["DPOP_ALGORITHM", "DPoPKey", "proof_target"]

# The algorithm of the key toolsift makes; the one every DPoP server supports (RFC 9449 §4.1, the MCP profile).
DPOP_ALGORITHM = "ES256"


def proof_target(url: str) -> str:
    """The ``htu`` of a request to ``url``: the URL without its query and fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@final
class DPoPKey:
    """An EC P-256 key pair whose holder signs DPoP proofs; tokens bound to it are useless to anyone else.

    Args:
        private_key: The key; :meth:`generate` makes one.
    """

    def __init__(self, private_key: ec.EllipticCurvePrivateKey) -> None:
        self._key = private_key
        public: dict[str, Any] = ECAlgorithm.to_jwk(private_key.public_key(), as_dict=True)
        self._jwk = {name: public[name] for name in ("kty", "crv", "x", "y")}

    @classmethod
    def generate(cls) -> DPoPKey:
        return cls(ec.generate_private_key(ec.SECP256R1()))

    @classmethod
    def from_pem(cls, pem: str) -> DPoPKey:
        """The key saved by :meth:`to_pem`.

        Raises:
            ValueError: ``pem`` is not an EC P-256 private key.
        """
        key = serialization.load_pem_private_key(pem.encode(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
            raise ValueError("a DPoP key must be an EC P-256 private key")
        return cls(key)

    def to_pem(self) -> str:
        return self._key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()

    @property
    def public_jwk(self) -> dict[str, str]:
        """The public half, as the proof's ``jwk`` header carries it."""
        return dict(self._jwk)

    def proof(
        self,
        method: str,
        url: str,
        *,
        access_token: str | None = None,
        nonce: str | None = None,
        body: bytes | None = None,
    ) -> str:
        """A fresh proof for one request.

        Args:
            method: The request's HTTP method (``htm``).
            url: Its URL; the proof names it without query and fragment (``htu``).
            access_token: The token it goes with; its SHA-256 becomes ``ath``.
            nonce: The nonce the server last handed out, if any.
            body: The body whose digest the proof carries (``content_digest``), for an MCP server.
        """
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method,
            "htu": proof_target(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = _b64url(hashlib.sha256(access_token.encode("ascii")).digest())
        if nonce is not None:
            claims["nonce"] = nonce
        if body is not None:
            claims["content_digest"] = f"sha-256=:{base64.b64encode(hashlib.sha256(body).digest()).decode()}:"
        headers = {"typ": "dpop+jwt", "jwk": self._jwk}
        return jwt.encode(claims, self._key, algorithm=DPOP_ALGORITHM, headers=headers)
