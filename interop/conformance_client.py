"""The conformance suite's client under test: each scenario driven through toolsift's public API.

The suite (npm ``@modelcontextprotocol/conformance``) starts this script with
the scenario's server URL as the last argument and the scenario's name in
``MCP_CONFORMANCE_SCENARIO``; it exits 0 when it did what the scenario asks.
Connections go through :class:`toolsift.mcp_sessions.McpSession`, never the
bare SDK. Run it through ``interop/conformance.py client``.

Authorization scenarios (``auth/...``) get the server's ``auth`` settings from
``MCP_CONFORMANCE_CONTEXT`` (pre-registered clients, client credentials with a
secret or a private key) and sign in headless: the suite's authorization server
redirects at once, so following the authorization URL one step yields the code
a person's browser would have carried back. Tokens go to a fresh folder.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Awaitable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import mcp.types as types
from client_plan import Surface, run_plan
from mcp import MCPError
from mcp.shared.auth import AuthorizationCodeResult

from toolsift import SkillError
from toolsift.config import HttpServer, parse_config
from toolsift.mcp_sessions import ClientCallbacks, McpSession, SessionOptions
from toolsift.mcp_sessions._internal import SessionState
from toolsift.toolbox import Toolbox


async def accept_defaults(server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
    """Accept a form with every default the schema gives (what a person pressing Enter would send)."""
    if not isinstance(params, types.ElicitRequestFormParams):
        return types.ElicitResult(action="decline")
    fields: dict[str, Any] = params.requested_schema.get("properties", {})
    return types.ElicitResult(
        action="accept",
        content={
            name: field["default"] for name, field in fields.items() if isinstance(field, dict) and "default" in field
        },
    )


async def sample(server: str, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(text="ok"), model="conformance")


# The client ID metadata document the suite's scenarios expect a client to name.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


async def sign_in_headless(server: str, url: str, redirect_uri: str) -> AuthorizationCodeResult:
    """Follow the authorization URL one step and read the code off the redirect, as a browser would carry it."""
    async with httpx2.AsyncClient() as http:
        response = await http.get(url, follow_redirects=False)
    query = parse_qs(urlsplit(response.headers["location"]).query)
    return AuthorizationCodeResult(
        code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
    )


async def authorization_server(url: str) -> str:
    """The authorization server the MCP server names in its protected resource metadata (RFC 9728).

    Enterprise-managed authorization takes the authorization server as configuration, never from the
    server; the suite does not hand it over, so this driver reads it as an administrator would.
    """
    parts = urlsplit(url)
    metadata = f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}"
    async with httpx2.AsyncClient() as http:
        servers: list[str] = (await http.get(metadata)).raise_for_status().json()["authorization_servers"]
    return servers[0]


async def auth_settings(scenario: str, url: str, context: dict[str, Any]) -> dict[str, Any] | None:
    """The server's ``auth`` block for an authorization scenario, from what the suite hands over."""
    if not scenario.startswith("auth/"):
        return None
    client = {"clientId": context["client_id"]} if "client_id" in context else {}
    if "valid_jwt" in context:  # workload identity federation: the platform's JWT is the grant
        return {"grant": "jwt_bearer", "assertion": context["valid_jwt"]}
    if "idp_id_token" in context:  # enterprise-managed authorization (SEP-990)
        return {
            "grant": "identity_assertion",
            **client,
            "clientSecret": context["client_secret"],
            "issuer": await authorization_server(url),
            "identityProvider": {
                "tokenEndpoint": context["idp_token_endpoint"],
                "clientId": context["idp_client_id"],
                "idToken": context["idp_id_token"],
            },
        }
    if "private_key_pem" in context:
        return {
            "grant": "client_credentials",
            **client,
            "privateKey": context["private_key_pem"],
            "signingAlgorithm": context.get("signing_algorithm", "RS256"),
        }
    if scenario.startswith("auth/client-credentials"):
        return {"grant": "client_credentials", **client, "clientSecret": context["client_secret"]}
    secret = {"clientSecret": context["client_secret"]} if "client_secret" in context else {}
    return {"clientMetadataUrl": CLIENT_METADATA_URL, **client, **secret}


async def use_served_skills(scenario: str, url: str) -> int:
    """The Skills extension's client scenarios, as a host: a Toolbox takes the server's skills.

    Taking them reads no file. Except in the no-prefetch scenario, the first skill is then used as
    ``/use`` uses one: its ``SKILL.md`` is fetched and checked against the listing (size, digest,
    front matter) and, once it passes, its bundled files are read as the model would read them. A
    file that fails a check stops the use there, and the scenario's tampered file is reported.
    """
    config = parse_config({"tools": {"mcpServers": {"conformance": {"url": url}}}, "skills": {"userSkills": False}})
    async with Toolbox(config) as box:
        skills = box.served_skills.skills
        if not skills:
            print(f"{scenario}: the server's skills were not taken", file=sys.stderr)
            return 1
        if scenario == "sep-2640-client-no-prefetch":
            return 0
        skill = skills[0]
        try:
            await skill.render()
            for name in skill.files.names():
                await skill.files.read(name)
        except SkillError as exc:
            print(f"{scenario}: {exc}", file=sys.stderr)
            return 1
    return 0


async def run(scenario: str, url: str, context: dict[str, Any]) -> int:
    if scenario.startswith("sep-2640-client-"):
        return await use_served_skills(scenario, url)
    callbacks = ClientCallbacks(sampling=sample, elicitation=accept_defaults, sign_in=sign_in_headless)
    # The harness allows a client 120 s (interop/conformance.py): connecting, sign-in included, may take most of it
    # when the suite starts dozens of clients at once on a shared machine.
    settings = {"url": url, "auth": await auth_settings(scenario, url, context), "timeout": 110}
    config = HttpServer.model_validate(settings).with_name("conformance")
    async with McpSession(config, options=SessionOptions(callbacks=callbacks)) as session:
        if session.state is not SessionState.READY:
            print(f"{scenario}: {session.status().error}", file=sys.stderr)
            return 1

        async def call(name: str, arguments: dict[str, Any]) -> str | None:
            result = await session.call_tool(name, arguments)
            return result.text_content() if result.is_error else None

        async def resources() -> str | None:
            listed = session.catalog.resources
            return None if not listed else await _failed(session.read_resource(str(listed[0].uri)))

        async def prompts() -> str | None:
            listed = session.catalog.prompts
            return None if not listed else await _failed(session.get_prompt(listed[0].name))

        surface = Surface(session.catalog.tools, call, resources, prompts)
        errors = await run_plan(scenario, surface, context)
    for error in errors:
        print(f"{scenario}: {error}", file=sys.stderr)
    return 1 if errors else 0


async def _failed(request: Awaitable[object]) -> str | None:
    try:
        await request
    except MCPError as exc:
        return str(exc)
    return None


def main() -> None:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="toolsift-conformance-")  # tokens of this run only
    sys.exit(anyio.run(run, scenario, sys.argv[-1], context))


if __name__ == "__main__":
    main()
