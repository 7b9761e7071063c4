"""What a conformance client does in each client scenario: one plan, driven by toolsift and by the bare SDK alike.

The suite's client scenarios each run a server that expects the client to do
something ordinary (list and call tools, read a resource, get a prompt) and
checks how it did it: its headers, its ``_meta``, its retries with
``requestState``, what it made of odd tool definitions. The plan here is the
same for both clients under test (``conformance_client.py`` through
``toolsift.mcp_sessions``, ``conformance_client_sdk.py`` through the SDK's
``Client``), so that the two differ only in how they speak MCP.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import mcp.types as types

# The 2026-07-28 client scenarios without authorization (`conformance list --client --requirements 2026-07-28`).
SCENARIOS_2026 = (
    "tools_call",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
)
# The Skills extension's (SEP-2640) client scenarios: a host takes a server's skills (conformance_client.py).
SKILLS_CLIENT = (
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
)
# Arguments of the tools the scenarios name; a tool not named here is called without arguments.
ARGUMENTS: dict[str, dict[str, Any]] = {
    "add_numbers": {"a": 5, "b": 3},
}
# The scenario that hands a tool's input schema back to the server, verbatim, through an echo tool.
ECHO_TOOL = "json_schema_echo"


@dataclass(frozen=True)
class Surface:
    """What a client under test does on the scenario's server; each returns None, or an error text."""

    tools: Sequence[types.Tool]
    call: Callable[[str, dict[str, Any]], Awaitable[str | None]]
    resources: Callable[[], Awaitable[str | None]]
    prompts: Callable[[], Awaitable[str | None]]


def calls(tools: Sequence[types.Tool], context: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls to make: the scenario's own (``toolCalls`` in its context), else one of each tool listed."""
    given = context.get("toolCalls")
    if isinstance(given, list):
        return [(call["name"], call.get("arguments") or {}) for call in given]
    schemas = {tool.name: tool.input_schema for tool in tools}
    if ECHO_TOOL in schemas:
        focal = next(name for name in schemas if name != ECHO_TOOL)
        return [(ECHO_TOOL, {"schema": schemas[focal]})]
    return [(tool.name, ARGUMENTS.get(tool.name, {})) for tool in tools]


async def run_plan(scenario: str, surface: Surface, context: dict[str, Any]) -> list[str]:
    """Run the scenario's plan on ``surface``; the errors met, empty when every step succeeded.

    Tool calls go at once (a scenario checks that concurrent calls keep their
    own state); resources and prompts are visited after them.
    """
    errors: list[str] = []

    async def call(name: str, arguments: dict[str, Any]) -> None:
        if (error := await surface.call(name, arguments)) is not None:
            errors.append(f"{name}: {error}")

    if scenario != "initialize":
        async with anyio.create_task_group() as group:
            for name, arguments in calls(surface.tools, context):
                group.start_soon(call, name, arguments)
    if scenario == "http-standard-headers":
        for visit in (surface.resources, surface.prompts):
            if (error := await visit()) is not None:
                errors.append(error)
    return errors
