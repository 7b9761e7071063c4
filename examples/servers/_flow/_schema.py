"""A compact notation for the flow server's tool table.

Writing 200 JSON schemas out in full would bury the one thing that matters in
each entry (its name, what it does, what it takes), so each tool is one call to
:func:`tool` with its properties as keyword arguments built by the small
helpers below. The helpers take JSON Schema keywords as they are spelled in
JSON (``maxLength``, ``additionalProperties``), so what you read is what the
client receives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp.types as types

Schema = dict[str, Any]

# Verbs that only look; verbs whose effect cannot be undone. The annotation of a
# tool follows the last word of its name unless the tool says otherwise.
READ_VERBS = frozenset(
    {
        "analyze",
        "capabilities",
        "conflicts",
        "dependencies",
        "diff",
        "estimate",
        "explain",
        "export",
        "get",
        "graph",
        "health",
        "history",
        "inbox",
        "info",
        "list",
        "logs",
        "metrics",
        "monitor",
        "patterns",
        "queue",
        "rank",
        "read",
        "report",
        "result",
        "results",
        "retrieve",
        "runs",
        "search",
        "status",
        "timeline",
        "usage",
        "validate",
        "check",
        "detect",
        "scan",
        "compare",
        "stats",
        "histogram",
        "decompose",
        "assess",
        "recognize",
        "collect",
        "evaluate",
        "analytics",
        "test",
    }
)
DESTRUCTIVE_VERBS = frozenset(
    {
        "delete",
        "destroy",
        "terminate",
        "reset",
        "clear",
        "restore",
        "unregister",
        "shutdown",
        "cleanup",
        "remove",
    }
)


def s(description: str, **keywords: Any) -> Schema:
    """A string property."""
    return {"type": "string", "description": description, **keywords}


def i(description: str, **keywords: Any) -> Schema:
    """An integer property."""
    return {"type": "integer", "description": description, **keywords}


def n(description: str, **keywords: Any) -> Schema:
    """A number property."""
    return {"type": "number", "description": description, **keywords}


def b(description: str, default: bool = False) -> Schema:
    """A boolean property with a default."""
    return {"type": "boolean", "description": description, "default": default}


def e(description: str, values: str, **keywords: Any) -> Schema:
    """A string enum property; ``values`` is space separated, the first one is the default."""
    options = values.split()
    return {"type": "string", "enum": options, "default": options[0], "description": description, **keywords}


def uri(description: str, **keywords: Any) -> Schema:
    """A URL property (``format: uri``)."""
    return {"type": "string", "format": "uri", "description": description, **keywords}


def arr(description: str, items: Schema, **keywords: Any) -> Schema:
    """An array property."""
    return {"type": "array", "items": items, "description": description, **keywords}


def obj(description: str, required: tuple[str, ...] = (), **properties: Schema) -> Schema:
    """A nested object with fixed properties."""
    schema: Schema = {
        "type": "object",
        "description": description,
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    return schema


def mapping(description: str, values: Schema | None = None) -> Schema:
    """A free-form object whose values follow ``values`` (strings by default)."""
    return {
        "type": "object",
        "description": description,
        "additionalProperties": {"type": "string"} if values is None else values,
    }


def ref(name: str, description: str) -> Schema:
    """A reference into the tool schema's ``$defs``."""
    return {"$ref": f"#/$defs/{name}", "description": description}


ANY_VALUE: Schema = {"type": ["string", "number", "integer", "boolean", "object", "array", "null"]}


@dataclass(frozen=True)
class ToolDef:
    """One tool of the table: the MCP tool plus the group it belongs to."""

    group: str
    tool: types.Tool


def tool(
    group: str,
    name: str,
    description: str,
    /,
    *,
    required: tuple[str, ...] = (),
    defs: dict[str, Schema] | None = None,
    read_only: bool | None = None,
    destructive: bool | None = None,
    open_world: bool = False,
    **properties: Schema,
) -> ToolDef:
    """Describe one tool; annotations follow the verb in its name unless given.

    The first three parameters are positional-only so that tools may have
    properties called ``name`` or ``description``.
    """
    verb = name.rsplit("_", 1)[-1]
    read_only = verb in READ_VERBS if read_only is None else read_only
    destructive = (verb in DESTRUCTIVE_VERBS if destructive is None else destructive) and not read_only
    schema: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    if defs:
        schema["$defs"] = defs
    annotations = types.ToolAnnotations(
        title=name.replace("_", " ").capitalize(),
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=read_only,
        open_world_hint=open_world,
    )
    return ToolDef(group, types.Tool(name=name, description=description, input_schema=schema, annotations=annotations))


# Properties many tools share, so that the same thing is described the same way everywhere.
NAMESPACE = s(
    "Memory namespace that isolates keys of different projects or agents",
    default="default",
    pattern="^[a-z0-9][a-z0-9_.-]*$",
    maxLength=64,
)
SWARM_ID = s("Identifier of the swarm, as returned by swarm_init", pattern="^swarm-[0-9a-f]+$")
AGENT_ID = s("Identifier of the agent, as returned by agent_spawn", pattern="^agent-[0-9a-f]+$")
TASK_ID = s("Identifier of the task, as returned by task_create or task_orchestrate", pattern="^task-[0-9a-f]+$")
WORKFLOW_ID = s("Identifier of the workflow, as returned by workflow_create", pattern="^workflow-[0-9a-f]+$")
SESSION_ID = s("Identifier of the session, as returned by session_start", pattern="^session-[0-9a-f]+$")
MODEL_ID = s("Identifier of the neural model, as returned by neural_train or model_load", minLength=1)
REPO = s("Repository as owner/name", pattern="^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
TIMEFRAME = e("Time window to cover", "24h 1h 7d 30d all")
FORMAT = e("Output format", "json markdown yaml csv")
PRIORITY = e("Priority of the work", "medium low high critical")
AGENT_TYPE = e("Kind of agent", "coder researcher analyst tester reviewer architect coordinator optimizer documenter")
TOPOLOGY = e("How agents talk to each other", "hierarchical mesh ring star")
LIMIT = i("Maximum number of items to return", default=20, minimum=1, maximum=500)
TAGS = arr("Free-form labels used for filtering", {"type": "string", "maxLength": 40}, maxItems=20, uniqueItems=True)
METADATA = mapping("Extra key/value metadata kept with the item")
DRY_RUN = b("Only report what would be done, change nothing")
