"""The ``auth`` grants beyond a person's browser sign-in: workload JWTs, enterprise identity assertions, DPoP."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from toolsift.config import HttpServer
from toolsift.config._internal import resolve_server


def server(**auth: Any) -> HttpServer:
    return HttpServer.model_validate({"url": "https://mcp.example.com/mcp", "auth": auth}).with_name("svc")


ENTERPRISE = {
    "grant": "identity_assertion",
    "clientId": "app",
    "clientSecret": "${APP_SECRET}",
    "issuer": "https://auth.example.com",
    "identityProvider": {
        "tokenEndpoint": "https://idp.example.com/token",
        "clientId": "idp-app",
        "clientSecret": "${IDP_SECRET}",
        "idToken": "${ID_TOKEN}",
    },
}


def test_jwt_bearer_grant_needs_the_workloads_jwt_or_its_file() -> None:
    with pytest.raises(ValidationError, match="grant jwt_bearer needs one of assertion"):
        server(grant="jwt_bearer")
    with pytest.raises(ValidationError, match="grant jwt_bearer needs one of assertion"):
        server(grant="jwt_bearer", assertion="${JWT}", assertionFile="/var/run/token")
    assert server(grant="jwt_bearer", assertionFile="/var/run/token").auth is not None


def test_a_workload_jwt_belongs_to_the_jwt_bearer_grant_only() -> None:
    with pytest.raises(ValidationError, match="set grant: jwt_bearer"):
        server(assertion="${JWT}")


def test_identity_assertion_grant_names_every_missing_setting() -> None:
    with pytest.raises(ValidationError, match="needs clientId, clientSecret, issuer, identityProvider"):
        server(grant="identity_assertion")


def test_identity_provider_needs_its_token_endpoint_and_the_id_token() -> None:
    with pytest.raises(ValidationError, match="idToken"):
        server(**{**ENTERPRISE, "identityProvider": {"tokenEndpoint": "https://idp/token", "clientId": "c"}})


def test_auth_secrets_of_the_new_grants_are_resolved_by_their_path(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in (("APP_SECRET", "s1"), ("IDP_SECRET", "s2"), ("ID_TOKEN", "t"), ("JWT", "j")):
        monkeypatch.setenv(name, value)
    enterprise = resolve_server(server(**ENTERPRISE))
    assert dict(enterprise.auth_secrets) == {
        "clientSecret": "s1",
        "identityProvider.clientSecret": "s2",
        "identityProvider.idToken": "t",
    }
    workload = resolve_server(server(grant="jwt_bearer", assertion="${JWT}"))
    assert dict(workload.auth_secrets) == {"assertion": "j"}
    assert "j" not in repr(workload)


@pytest.mark.parametrize(("written", "meaning"), [(None, None), (True, True), (False, False)])
def test_dpop_defaults_to_when_the_authorization_server_offers_it(written: bool | None, meaning: bool | None) -> None:
    settings = {} if written is None else {"dpop": written}
    config = server(**settings)
    assert config.auth is not None and config.auth.dpop is meaning
