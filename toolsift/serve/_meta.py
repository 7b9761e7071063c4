"""``call_tool``: how a 2026-07-28 client runs what a search or a skill found, with no per-connection state.

Such a client's tool list may not grow as a side effect of its own calls, so
``search_tools`` cannot unlock anything for it. Instead its answer gives each
found tool's name, description and input schema, and the client runs one by
name through ``call_tool``. That tool is a way in, not around: the call goes
through the same routing and pipeline as a direct call (five layers, argument
validation, approval, audit, progress, result guard), with the endpoint's scope
widened by one of two things only:

- the one tool named, when this endpoint's ``search_tools`` finds it (internal
  tools of searchable servers; layers 3-5 apply as to any call);
- the turn scope of the skill named in ``skill``, as calling ``skill__<name>``
  describes it (its allowed-tools; the profile's layers still apply).

Anything else is checked against the endpoint's own scope and refused by the
layer that hides it, with that layer's reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import mcp.types as types
from jsonschema import Draft202012Validator

from ..registry import ToolResult

__all__ = [
    "META_TOOL",
    "META_TOOL_NAME",
    "SEARCH_DESCRIPTION",
    "MetaCall",
    "found_for_meta",
    "parse_meta_call",
    "with_reach",
]

META_TOOL_NAME = "call_tool"

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "minLength": 1,
            "description": "The tool's name, as search_tools or a skill gave it",
        },
        "arguments": {"type": "object", "description": "The tool's arguments, as its input_schema describes them"},
        "skill": {
            "type": "string",
            "minLength": 1,
            "description": "Run the tool with this skill's tools in reach (the skill__<name> you called)",
        },
    },
    "required": ["name"],
    "additionalProperties": False,
}
_VALIDATOR = Draft202012Validator(_SCHEMA)

#: ``search_tools``' description for clients that cannot have tools unlocked into their list.
SEARCH_DESCRIPTION = (
    "Find tools by what they do. Search per step, not per task: give each thing you need done as its own short "
    "query in 'queries' (for example [\"read a file\", \"send an email\"]); 'query' takes one need or an exact tool "
    "name. You get the best matching tools, each with whether you may call it, its input_schema, and how to run "
    f'it: tools in your tool list directly, the others with {META_TOOL_NAME} {{"name": ..., "arguments": {{...}}}}.'
)

META_TOOL = types.Tool(
    name=META_TOOL_NAME,
    title="Run a found tool",
    description=(
        "Run a tool that search_tools found, or one of a skill's tools, by name: "
        '{"name": ..., "arguments": {...}}; for a skill\'s tool add "skill": the skill\'s name. '
        "Tools in your tool list are called directly, not through this tool."
    ),
    input_schema=_SCHEMA,
    annotations=types.ToolAnnotations(title="Run a found tool", read_only_hint=False, open_world_hint=True),
)


@dataclass(frozen=True)
class MetaCall:
    """One ``call_tool`` request.

    Attributes:
        name: The tool to run.
        arguments: Its arguments.
        skill: The skill whose scope the call runs in, or None.
    """

    name: str
    arguments: dict[str, Any]
    skill: str | None


def parse_meta_call(arguments: Mapping[str, Any] | None) -> MetaCall | str:
    """The call ``arguments`` ask for, or why they are not one (a message naming the field)."""
    given = dict(arguments or {})
    errors = sorted(_VALIDATOR.iter_errors(given), key=lambda error: list(error.absolute_path))
    if errors:
        reasons = "; ".join(
            f"{'.'.join(map(str, error.absolute_path)) or 'arguments'}: {error.message}" for error in errors
        )
        return f"Invalid arguments for tool {META_TOOL_NAME!r}: {reasons}"
    return MetaCall(given["name"], dict(given.get("arguments") or {}), given.get("skill"))


def found_for_meta(
    result: ToolResult, *, listed: Mapping[str, str], schema_of: Callable[[str], Mapping[str, Any] | None]
) -> ToolResult:
    """A ``search_tools`` answer for a 2026-07-28 client: what it found, and how each tool is run.

    Tools the endpoint lists are named as listed (``"listed": true``: call
    them directly); the other callable ones say ``"run_with": "call_tool"``;
    each callable tool carries its ``input_schema``. Nothing is said to be unlocked.

    Args:
        result: The search's own answer (no discovery state was bound, so it unlocked nothing).
        listed: Canonical name -> served name of the tools the endpoint lists.
        schema_of: The input schema of a tool found, by canonical name (None: it is gone).
    """
    payload = result.structured_content
    if result.is_error or not isinstance(payload, dict):
        return result
    if "tools" not in payload:  # only names to unlock were given: nothing is, for this client
        note = f"Nothing is added to your tool list: run a tool search_tools found with {META_TOOL_NAME}."
        return _answer(result, {**payload, "note": note})
    if not payload["tools"]:
        return result  # nothing matches: the search says so
    tools = []
    renamed: dict[str, str] = {}
    run_with = False
    for found in payload["tools"]:
        entry = dict(found)
        canonical = entry["name"]
        if canonical in listed:
            entry["name"] = renamed[canonical] = listed[canonical]
            entry["listed"] = True
        elif entry.get("callable"):
            entry["run_with"] = META_TOOL_NAME
            run_with = True
        schema = schema_of(canonical) if entry.get("callable") else None
        if schema is not None:
            entry["input_schema"] = dict(schema)
        tools.append(entry)
    payload = {**payload, "tools": tools}
    if "needs" in payload:
        payload["needs"] = [
            {**need, "tools": [renamed.get(name, name) for name in need["tools"]]} for need in payload["needs"]
        ]
    unmatched = [json.dumps(need["query"]) for need in payload.get("needs", ()) if not need["tools"]]
    parts = [f"No tool matches {', '.join(unmatched)}; try other words for it."] if unmatched else []
    if run_with:
        parts.append(
            f'Tools marked "run_with" are not in your tool list: run one with {META_TOOL_NAME} '
            '{"name": <its name>, "arguments": {...}}, the arguments as its input_schema describes.'
        )
    if any(entry.get("listed") for entry in tools):
        parts.append('Tools marked "listed" are in your tool list: call them directly.')
    if any(not entry.get("callable") for entry in tools):
        parts.append("Tools with callable false cannot be run here; each says why.")
    payload["note"] = " ".join(parts)
    return _answer(result, payload)


def _answer(result: ToolResult, payload: dict[str, Any]) -> ToolResult:
    """``result`` saying ``payload`` (as JSON text and structured content), its other fields kept."""
    text = types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))
    return result.model_copy(update={"content": [text], "structured_content": payload})


def with_reach(result: ToolResult, *, run_with: str | None, endpoint: str | None, listed_from_now: bool) -> ToolResult:
    """A ``skill__<name>`` answer, with where the skill's tools are reached.

    Args:
        result: The skill tool's answer.
        run_with: The skill, when some of its tools are reached through ``call_tool`` only.
        endpoint: The path where exactly the skill's scope is listed (HTTP), or None.
        listed_from_now: The skill's tools were added to this client's tool list (handshake-era clients).
    """
    payload = result.structured_content
    if result.is_error or not isinstance(payload, dict):
        return result
    payload = dict(payload)
    parts = []
    if listed_from_now:
        parts.append("Its tools are in your tool list from your next step on.")
    if run_with is not None:
        payload["run_with"] = {"tool": META_TOOL_NAME, "skill": run_with}
        parts.append(
            f"Its tools that are not in your tool list run through {META_TOOL_NAME} "
            f'{{"name": ..., "arguments": {{...}}, "skill": {json.dumps(run_with)}}}.'
        )
    if endpoint is not None:
        payload["endpoint"] = endpoint
        parts.append(f"The MCP endpoint {endpoint} lists exactly this skill's tools.")
    if not parts:
        return result
    note = " ".join(parts)
    blocks = [*result.content, types.TextContent(type="text", text=note)]
    return result.model_copy(update={"content": blocks, "structured_content": payload})
