"""The conformance suite's client under test, as the bare MCP SDK: the yardstick for ``conformance_client.py``.

The same plan (``client_plan``) driven through the SDK's ``Client`` with its
defaults (``mode="auto"``) and the same answers to sampling and elicitation,
so that a scenario one client passes and the other does not shows a
difference in how they speak MCP. Authorization scenarios are not driven
here (the SDK client signs in only with an OAuth provider an application
wires up); ``interop/conformance.py client-2026`` compares the rest.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import mcp.types as types
from client_plan import Surface, run_plan
from conformance_client import accept_defaults, sample
from mcp import Client, MCPError
from mcp.client.context import ClientRequestContext


async def run(scenario: str, url: str, context: dict[str, Any]) -> int:
    async def elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        return await accept_defaults("conformance", params)

    async def create_message(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        return await sample("conformance", params)

    try:
        async with Client(url, elicitation_callback=elicit, sampling_callback=create_message) as client:
            tools = (await client.list_tools()).tools

            async def call(name: str, arguments: dict[str, Any]) -> str | None:
                try:
                    result = await client.call_tool(name, arguments)
                except (MCPError, RuntimeError) as exc:
                    return str(exc)
                return str(result.content) if result.is_error else None

            async def resources() -> str | None:
                try:
                    listed = (await client.list_resources()).resources
                    if listed:
                        await client.read_resource(str(listed[0].uri))
                except MCPError as exc:
                    return str(exc)
                return None

            async def prompts() -> str | None:
                try:
                    listed = (await client.list_prompts()).prompts
                    if listed:
                        await client.get_prompt(listed[0].name)
                except MCPError as exc:
                    return str(exc)
                return None

            errors = await run_plan(scenario, Surface(tools, call, resources, prompts), context)
    except Exception as exc:  # a client that cannot connect fails the scenario; say why
        errors = [f"{type(exc).__name__}: {exc}"]
    for error in errors:
        print(f"{scenario}: {error}", file=sys.stderr)
    return 1 if errors else 0


def main() -> None:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    sys.exit(anyio.run(run, scenario, sys.argv[-1], context))


if __name__ == "__main__":
    main()
