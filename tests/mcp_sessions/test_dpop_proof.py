"""DPoP proofs as a resource server checks them (RFC 9449 §4.3), read back with PyJWT from the key in their header."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from toolsift.mcp_sessions._dpop_proof import DPoPKey, proof_target


def checked(proof: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The proof's header and claims, its signature verified with the public key it carries."""
    header = jwt.get_unverified_header(proof)
    public = jwt.PyJWK(header["jwk"], algorithm=header["alg"]).key
    return header, jwt.decode(proof, public, algorithms=[header["alg"]])


def test_proof_names_the_request_and_carries_only_the_public_key() -> None:
    key = DPoPKey.generate()
    header, claims = checked(key.proof("POST", "https://as.example.com/token?x=1#f"))
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256"
    assert set(header["jwk"]) == {"kty", "crv", "x", "y"}  # no "d": the private part never leaves
    assert claims["htm"] == "POST" and claims["htu"] == "https://as.example.com/token"
    assert {"jti", "iat"} <= set(claims) and not {"ath", "nonce", "content_digest"} & set(claims)


def test_proof_with_a_token_binds_its_hash_the_nonce_and_the_body() -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    _, claims = checked(DPoPKey.generate().proof("POST", "https://mcp/mcp", access_token="tok", nonce="n1", body=body))
    assert claims["ath"] == base64.urlsafe_b64encode(hashlib.sha256(b"tok").digest()).rstrip(b"=").decode()
    assert claims["nonce"] == "n1"
    assert claims["content_digest"] == f"sha-256=:{base64.b64encode(hashlib.sha256(body).digest()).decode()}:"


def test_every_proof_is_fresh() -> None:
    key = DPoPKey.generate()
    first, second = (checked(key.proof("GET", "https://mcp/mcp"))[1]["jti"] for _ in range(2))
    assert first != second


def test_key_survives_its_pem_and_signs_as_before() -> None:
    key = DPoPKey.generate()
    again = DPoPKey.from_pem(key.to_pem())
    assert again.public_jwk == key.public_jwk


@pytest.mark.parametrize(
    "other",
    [rsa.generate_private_key(public_exponent=65537, key_size=2048), ec.generate_private_key(ec.SECP384R1())],
)
def test_a_saved_key_of_another_kind_is_refused(other: Any) -> None:
    pem = other.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    with pytest.raises(ValueError, match="EC P-256"):
        DPoPKey.from_pem(pem)


def test_proof_target_drops_query_and_fragment_only() -> None:
    assert proof_target("http://h:8080/a/b?q=1#x") == "http://h:8080/a/b"
