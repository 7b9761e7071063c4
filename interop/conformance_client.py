"""The conformance suite's client under test: each scenario driven through toolsift's public API.

The suite (npm ``@modelcontextprotocol/conformance``) starts this script with
the scenario's server URL as the last argument and the scenario's name in
``MCP_CONFORMANCE_SCENARIO``; it exits 0 when it did what the scenario asks.
Connections go through :class:`toolsift.mcp_sessions.McpSession`, never the
bare SDK. Run it through ``interop/conformance.py client``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import mcp.types as types

from toolsift.config import ServerConfig
from toolsift.mcp_sessions import ClientCallbacks, McpSession, SessionOptions, SessionState


async def accept_defaults(server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
    """Accept a form with every default the schema gives (what a person pressing Enter would send)."""
    if not isinstance(params, types.ElicitRequestFormParams):
        return types.ElicitResult(action="decline")
    fields: dict[str, Any] = params.requested_schema.get("properties", {})
    return types.ElicitResult(action="accept", content={name: field["default"] for name, field in fields.items()
                                                        if isinstance(field, dict) and "default" in field})


async def sample(server: str, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(text="ok"), model="conformance")


CALLS: dict[str, tuple[str, dict[str, Any]] | None] = {
    "initialize": None,
    "tools_call": ("add_numbers", {"a": 5, "b": 3}),
    "sse-retry": ("test_reconnection", {}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
}


async def run(scenario: str, url: str) -> int:
    callbacks = ClientCallbacks(sampling=sample, elicitation=accept_defaults)
    config = ServerConfig(url=url).with_name("conformance")
    async with McpSession(config, options=SessionOptions(callbacks=callbacks)) as session:
        if session.state is not SessionState.READY:
            print(f"{scenario}: {session.status().error}", file=sys.stderr)
            return 1
        call = CALLS.get(scenario)
        if call is None and not scenario.startswith("auth/"):
            return 0
        name, arguments = call if call is not None else (session.catalog.tools[0].name, {})
        result = await session.call_tool(name, arguments)
        if result.is_error:
            print(f"{scenario}: {result.text_content()}", file=sys.stderr)
            return 1
    return 0


def main() -> None:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    sys.exit(anyio.run(run, scenario, sys.argv[-1]))


if __name__ == "__main__":
    main()
