"""``search_tools``: the meta-tool that finds tools and skills and unlocks what the caller may use.

What a result may list, and what it unlocks, follows the permission layers
the registry already enforces; nothing is decided twice:

- never listed: tools of unsearchable servers (the index leaves them out),
  tools outside the agent's ``allowed_tools`` (layer 3: the agent can never
  call them), and ``search_tools`` itself;
- listed with ``callable: false`` and the reason: tools the active skill does
  not allow (layer 4, including plan mode) or the caller's permissions refuse
  (layer 5); ``granted_by`` names the skills whose ``allowed-tools`` would offer
  them;
- listed, ``callable: true``, and unlocked for the conversation: the rest.
  Unlocking adds the names to the conversation's :class:`Discovery`, whose
  :meth:`~Discovery.scope_for_turn` puts them in the next round's schemas.
"""

from __future__ import annotations

import json
from typing import Any, final

import mcp.types as types

from ..registry import Level, Permissions, ToolContext, ToolResult, ToolSpec, TurnScope
from ..registry._permissions import check_permissions
from ._discovery import Discovery
from ._documents import SearchDocument
from ._index import SearchIndex

__all__ = ["SEARCH_TOOL_NAME", "SearchToolsTool"]

SEARCH_TOOL_NAME = "search_tools"
DEFAULT_MAX = 8
MAX_LIMIT = 25
SKILL_LIMIT = 3

_DESCRIPTION = (
    "Find tools and skills by what they do. Give a short description of the task (or an exact tool name); "
    "you get the best matching tools, each with whether you may call it and which skill offers it, plus "
    "matching skills the user can activate with /use. Matching tools you may call are added to your tools "
    "from your next step on."
)


@final
class SearchToolsTool:
    """The ``search_tools`` registry tool (read-only, level ``read``).

    Args:
        index: What it searches.
        default_max: Tools returned when the call gives no ``max``.
        max_limit: The largest ``max`` a call may ask for.
        skill_limit: Skills returned at most, besides the tools.

    Raises:
        ValueError: A limit is below 1 or ``default_max`` exceeds ``max_limit``.
    """

    def __init__(self, index: SearchIndex, *, default_max: int = DEFAULT_MAX, max_limit: int = MAX_LIMIT,
                 skill_limit: int = SKILL_LIMIT) -> None:
        if min(default_max, max_limit, skill_limit) < 1 or default_max > max_limit:
            raise ValueError(f"need 1 <= default_max <= max_limit and skill_limit >= 1, got default_max="
                             f"{default_max!r}, max_limit={max_limit!r}, skill_limit={skill_limit!r}")
        self.index = index
        self._default_max = default_max
        self._skill_limit = skill_limit
        self._spec = ToolSpec(
            name=SEARCH_TOOL_NAME,
            description=_DESCRIPTION,
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1,
                              "description": "What the tool should do, in a few words, or an exact tool name"},
                    "max": {"type": "integer", "minimum": 1, "maximum": max_limit, "default": default_max,
                            "description": "How many tools to return at most"},
                    "server": {"type": "string", "description": "Only tools of this MCP server"},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            title="Search tools",
            annotations=types.ToolAnnotations(title="Search tools", read_only_hint=True, destructive_hint=False,
                                              idempotent_hint=False, open_world_hint=False),
            source="meta",
            required_level=Level.READ,
            read_only=True,
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool's static description."""
        return self._spec

    def __repr__(self) -> str:
        return f"SearchToolsTool(backend={self.index.backend!r})"

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Search, report, and unlock callable matches into the current :class:`Discovery`."""
        query = str(args["query"])
        limit = int(args.get("max", self._default_max))
        server = args.get("server")
        scope = ctx.scope or TurnScope()
        permissions = ctx.permissions or Permissions()
        registry = self.index.registry

        def listable(doc: SearchDocument) -> bool:
            if doc.name == SEARCH_TOOL_NAME:
                return False
            hidden = registry.hidden_reason(doc.name, scope.with_unlocked([doc.name]))
            return hidden is None or hidden[0] != 3

        tool_hits = self.index.search(query, limit=limit, server=server, kind="tool", accept=listable)
        skill_hits = self.index.search(query, limit=self._skill_limit, server=server, kind="skill")
        tools: list[dict[str, Any]] = []
        reachable: list[str] = []
        for hit in tool_hits:
            entry, can_call = self._describe_tool(hit.document, scope, permissions)
            tools.append(entry)
            if can_call and registry.hidden_reason(hit.document.name, scope) is not None:
                reachable.append(hit.document.name)
        discovery = Discovery.current()
        if discovery is not None:
            discovery.unlock(reachable)
        payload: dict[str, Any] = {"tools": tools, "skills": [self._describe_skill(h.document) for h in skill_hits]}
        if reachable and discovery is not None:
            payload["unlocked"] = reachable
        payload["note"] = _note(query, tools, payload["skills"], reachable, discovery)
        return ToolResult.text(json.dumps(payload, ensure_ascii=False), structured=payload)

    def _describe_tool(self, doc: SearchDocument, scope: TurnScope,
                       permissions: Permissions) -> tuple[dict[str, Any], bool]:
        registry = self.index.registry
        spec = registry.get(doc.name).spec
        denial = registry.hidden_reason(doc.name, scope.with_unlocked([doc.name]))
        if denial is None:
            refusal = check_permissions(spec, {}, permissions)
            denial = (5, refusal) if refusal is not None else None
        entry: dict[str, Any] = {"name": doc.name}
        if doc.server:
            entry["server"] = doc.server
        entry["description"] = doc.summary
        entry["callable"] = denial is None
        if denial is not None:
            entry["reason"] = f"layer {denial[0]}: {denial[1]}"
        granted = self._granted_by(doc.name)
        if granted:
            entry["granted_by"] = granted
        return entry, denial is None

    def _granted_by(self, name: str) -> list[str]:
        """Loaded skills that would offer ``name``, decided by the registry's own visibility rule."""
        if self.index.skills is None:
            return []
        registry = self.index.registry
        return [
            skill.name for skill in self.index.skills.invocable()
            if skill.allowed_tools and registry.hidden_reason(name, TurnScope(
                skill_allowed=skill.allowed_tools, skill_disallowed=skill.disallowed_tools, skill=skill.name)) is None
        ]

    def _describe_skill(self, doc: SearchDocument) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": doc.name, "description": doc.summary}
        skills = self.index.skills.invocable() if self.index.skills is not None else ()
        skill = next((s for s in skills if s.name == doc.name), None)
        if skill is not None:
            entry["use"] = skill.usage()
        return entry


def _note(query: str, tools: list[dict[str, Any]], skills: list[dict[str, Any]], reachable: list[str],
          discovery: Discovery | None) -> str:
    if not tools and not skills:
        return f"Nothing matches {query!r}; try other words, fewer words, or an exact tool name."
    if reachable and discovery is None:
        return ("Tool discovery is not enabled in this conversation: tools not already in your tool list "
                "cannot be called.")
    if reachable:
        return "Unlocked tools are in your tool list from your next step on; call them by name."
    return "No new tools were unlocked."
