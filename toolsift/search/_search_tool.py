"""``search_tools``: the meta-tool that finds tools and skills, and unlocks the tools the model picks.

What a result may list follows the permission layers the registry already
enforces; nothing is decided twice:

- never listed: tools of unsearchable servers (the index leaves them out),
  tools outside the agent's ``allowed_tools`` (layer 3: the agent can never
  call them), and ``search_tools`` itself;
- listed with ``callable: false`` and the reason: tools the active skill does
  not allow (layer 4, including plan mode) or the caller's permissions refuse
  (layer 5); ``granted_by`` names the skills whose ``allowed-tools`` would offer
  them;
- listed with ``callable: true``: the rest. The same tool on several servers
  is one entry, its other servers in ``also_on``.

A task usually needs several tools, one per step, and one query naming the
whole task finds few of them: its words pull towards whichever tool shares the
most of them. So a call takes several needs at once (``queries``), each
searched on its own; the result describes each tool once and lists, per need,
the names it found, so asking for five needs does not send five descriptions
of the same tool.

What it unlocks is chosen, not everything it lists: a tool a query named
exactly, the best ``auto_unlock`` callable hits of each query (one by default),
and the tools the model names in ``unlock`` (from this result or an earlier one).
Unlocking adds the names to the conversation's :class:`Discovery`, whose
:meth:`~Discovery.scope_for_turn` puts them in the next round's schemas and
whose caps evict the least recently used ones.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, final

import mcp.types as types

from .._exceptions import InvalidArguments
from .._names import SEARCH_TOOL_NAME
from ..registry import Level, Permissions, ToolContext, ToolResult, ToolSpec, TurnScope
from ..registry._internal import Unlocks
from ._discovery import unlock_denial
from ._documents import SearchDocument, cut, quoted
from ._index import SearchHit, SearchIndex

__all__ = ["SEARCH_TOOL_NAME", "SearchToolsTool"]

DEFAULT_MAX = 8
MAX_LIMIT = 25
SKILL_LIMIT = 3
AUTO_UNLOCK = 1
#: Needs one call takes at most, and tools listed per need when a call gives several and no ``max``.
MAX_NEEDS = 8
NEED_MAX = 3

_DESCRIPTION = (
    "Find tools and skills by what they do. Search per step, not per task: give each thing you need done as its "
    'own short query in \'queries\' (for example ["read a file", "send an email"]); one query describing the '
    "whole task finds fewer of its tools. 'query' takes one need or an exact tool name. You get the best "
    "matching tools, each with whether you may call it and which skill offers it, the names found for each "
    "query, and matching skills the user can activate with /use. The best match you may call for each query is "
    "added to your tools from your next step on; to add others from the list, call again with unlock: [their "
    "names]."
)


@final
class SearchToolsTool:
    """The ``search_tools`` registry tool (read-only, level ``read``).

    Args:
        index: What it searches.
        default_max: Tools returned when the call gives no ``max``.
        max_limit: The largest ``max`` a call may ask for (and the most names ``unlock`` takes).
        skill_limit: Skills returned at most, besides the tools.
        auto_unlock: How many of the best callable hits a search unlocks by itself (0: only
            exact names and what ``unlock`` asks for).
        prepare: Awaited before each call: the toolbox starts there the lazy servers a
            search should see (their tools are unknown until they run).

    Raises:
        ValueError: A limit is below 1, ``default_max`` exceeds ``max_limit``, or ``auto_unlock`` is negative.
    """

    def __init__(
        self,
        index: SearchIndex,
        *,
        default_max: int = DEFAULT_MAX,
        max_limit: int = MAX_LIMIT,
        skill_limit: int = SKILL_LIMIT,
        auto_unlock: int = AUTO_UNLOCK,
        prepare: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        if min(default_max, max_limit, skill_limit) < 1 or default_max > max_limit or auto_unlock < 0:
            raise ValueError(
                f"need 1 <= default_max <= max_limit, skill_limit >= 1 and auto_unlock >= 0, got "
                f"default_max={default_max!r}, max_limit={max_limit!r}, skill_limit={skill_limit!r}, "
                f"auto_unlock={auto_unlock!r}"
            )
        self.index = index
        self._prepare = prepare
        self._default_max = default_max
        self._skill_limit = skill_limit
        self._auto_unlock = auto_unlock
        self._spec = ToolSpec(
            name=SEARCH_TOOL_NAME,
            description=_DESCRIPTION,
            input_schema=_input_schema(default_max, max_limit),
            title="Search tools",
            annotations=types.ToolAnnotations(
                title="Search tools",
                read_only_hint=True,
                destructive_hint=False,
                idempotent_hint=False,
                open_world_hint=False,
            ),
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
        """Search and report; unlock exact names, the best hits and the requested names into the :class:`Discovery`.

        Raises:
            InvalidArguments: None of ``query``, ``queries`` and ``unlock`` is given, or ``server`` names
                no searchable server.
        """
        needs = list(
            dict.fromkeys(
                str(need) for need in [*([args["query"]] if "query" in args else []), *(args.get("queries") or ())]
            )
        )
        requested = [str(name) for name in args.get("unlock") or ()]
        if not needs and not requested:
            raise InvalidArguments(
                SEARCH_TOOL_NAME, ["give a 'query' (or several in 'queries'), or the names of listed tools to 'unlock'"]
            )
        if self._prepare is not None:
            await self._prepare()
        scope = ctx.scope or TurnScope()
        permissions = ctx.permissions or Permissions()
        # Every indexed tool unlocked: layers 1-4 as they would be once the model unlocks a tool.
        surfaced = scope.with_unlocked(await self.index.tool_names())
        payload: dict[str, Any] = {}
        wanted: list[str] = []
        more = False  # listed tools the caller may call but that were not unlocked
        if needs:
            wanted, more = await self._search(needs, args, scope, surfaced, permissions, payload)
        refused: list[dict[str, str]] = []
        for name in requested:
            canonical, reason = await self._unlockable(name, surfaced, permissions)
            if canonical is None:
                refused.append({"name": name, "reason": reason})
            elif self.index.registry.hidden_reason(canonical, scope) is not None:
                wanted.append(canonical)
        discovery = ctx.discovery
        if discovery is not None and wanted:
            changed = discovery.unlock(wanted)
            now = [name for name in dict.fromkeys(wanted) if name in discovery.unlocked]
            if now:
                payload["unlocked"] = now
            if changed.evicted:
                payload["evicted"] = list(changed.evicted)
        if refused:
            payload["refused"] = refused
        payload["note"] = _note(needs, payload, wanted, discovery, more)
        return ToolResult.text(json.dumps(payload, ensure_ascii=False), structured=payload)

    async def _search(
        self,
        needs: list[str],
        args: dict[str, Any],
        scope: TurnScope,
        surfaced: TurnScope,
        permissions: Permissions,
        payload: dict[str, Any],
    ) -> tuple[list[str], bool]:
        """Fill ``tools`` and ``skills`` (and ``needs`` for several queries: the names each found).

        Returns the names to unlock by themselves, and whether more could be.
        """
        registry = self.index.registry

        def listable(doc: SearchDocument) -> bool:
            if doc.name == SEARCH_TOOL_NAME:
                return False
            hidden = registry.hidden_reason(doc.name, surfaced)
            return hidden is None or hidden[0] != 3

        server = args.get("server")
        limit = int(args.get("max", self._default_max if len(needs) == 1 else min(NEED_MAX, self._default_max)))
        tools: dict[str, dict[str, Any]] = {}  # each tool described once, whichever needs found it
        skills: dict[str, dict[str, Any]] = {}
        found: list[dict[str, Any]] = []
        weak: list[str] = []  # needs whose hits all meet little of them
        wanted: list[str] = []
        more = False
        for need in needs:
            try:
                tool_hits = await self.index.asearch(need, limit=limit, server=server, kind="tool", accept=listable)
                skill_hits = await self.index.asearch(need, limit=self._skill_limit, server=server, kind="skill")
            except LookupError as exc:
                raise InvalidArguments(SEARCH_TOOL_NAME, [f"server: {exc}"]) from exc
            names = []
            best = 0  # callable hits unlocked for ranking first
            for hit in tool_hits:
                entry, can_call = self._describe_tool(hit, surfaced, permissions)
                name = tools.setdefault(entry["name"], entry)["name"]
                names.append(name)
                if can_call and registry.hidden_reason(name, scope) is not None:
                    if hit.exact or (best < self._auto_unlock and not hit.weak):
                        wanted.append(name)
                        best += not hit.exact
                    else:
                        more = True
            found.append({"query": cut(need), "tools": names})
            if tool_hits and not any(hit.exact or not hit.weak for hit in tool_hits):
                weak.append(cut(need))
            for hit in skill_hits:
                skills.setdefault(hit.document.name, self._describe_skill(hit.document))
        if len(needs) > 1:
            payload["needs"] = found
        if weak:
            payload["weak"] = weak
        payload["tools"] = list(tools.values())
        payload["skills"] = list(skills.values())[: self._skill_limit]
        return wanted, more

    def _denial(self, name: str, surfaced: TurnScope, permissions: Permissions) -> tuple[int, str] | None:
        """Why the caller may not call ``name`` once unlocked (layers 3-5), or None."""
        return unlock_denial(self.index.registry, name, surfaced, permissions)

    async def _unlockable(self, name: str, surfaced: TurnScope, permissions: Permissions) -> tuple[str | None, str]:
        """The canonical name to unlock, or None and why not."""
        canonical = await self.index.indexed(name)
        denial = self._denial(canonical, surfaced, permissions) if canonical is not None else None
        if canonical is None or canonical == SEARCH_TOOL_NAME or (denial is not None and denial[0] == 3):
            return None, "no such tool among those search_tools finds; use a name from a search result"
        if denial is not None:
            return None, f"layer {denial[0]}: {denial[1]}"
        return canonical, ""

    def _describe_tool(
        self, hit: SearchHit, surfaced: TurnScope, permissions: Permissions
    ) -> tuple[dict[str, Any], bool]:
        # Of the same tool on several servers, show one the caller may call when there is one.
        doc, denial = hit.document, self._denial(hit.document.name, surfaced, permissions)
        for member in hit.members[1:] if denial is not None else ():
            if self._denial(member.name, surfaced, permissions) is None:
                doc, denial = member, None
                break
        entry: dict[str, Any] = {"name": doc.name}
        if doc.server:
            entry["server"] = doc.server
        entry["description"] = doc.summary
        entry["callable"] = denial is None
        if denial is not None:
            entry["reason"] = f"layer {denial[0]}: {denial[1]}"
        others = [d.server for d in hit.members if d is not doc and d.server]
        if others:
            entry["also_on"] = others
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
            skill.name
            for skill in self.index.skills.invocable()
            if skill.allowed_tools
            and registry.hidden_reason(
                name,
                TurnScope(skill_allowed=skill.allowed_tools, skill_disallowed=skill.disallowed_tools, skill=skill.name),
            )
            is None
        ]

    def _describe_skill(self, doc: SearchDocument) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": doc.name, "description": doc.summary}
        skills = self.index.skills.invocable() if self.index.skills is not None else ()
        skill = next((s for s in skills if s.name == doc.name), None)
        if skill is not None:
            entry["use"] = skill.usage()
        return entry


def _note(needs: list[str], payload: dict[str, Any], wanted: list[str], discovery: Unlocks | None, more: bool) -> str:
    tools, skills = payload.get("tools"), payload.get("skills")
    if len(needs) == 1 and not tools and not skills:
        return f"Nothing matches {quoted(needs[0])}; try other words, fewer words, or an exact tool name."
    unmatched = [quoted(need["query"]) for need in payload.get("needs", ()) if not need["tools"]]
    if unmatched and not tools and not skills:
        return "Nothing matches any query; try other words, fewer words, or exact tool names."
    parts = [f"No tool matches {', '.join(unmatched)}; try other words for it."] if unmatched else []
    if payload.get("weak"):
        weak = ", ".join(quoted(need) for need in payload["weak"])
        parts.append(
            f"No good match for {weak}: the tools listed for it meet little of it and were not unlocked; "
            "read their descriptions before unlocking one, or tell the user no tool does it."
        )
    if wanted and discovery is None:
        return " ".join(
            [
                *parts,
                "Tool discovery is not enabled in this conversation: tools not already in your "
                "tool list cannot be called.",
            ]
        )
    if payload.get("unlocked"):
        parts.append("Unlocked tools are in your tool list from your next step on; call them by name.")
    else:
        parts.append("No new tools were unlocked.")
    if payload.get("evicted"):
        parts.append(
            "To keep your tool list small, the tools in 'evicted' were taken out of it; search again to get one back."
        )
    if more:
        parts.append("To add another listed tool, call search_tools with unlock: [its name].")
    if any(not tool["callable"] for tool in tools or ()):
        parts.append(
            "A tool listed with callable: false is not allowed in this conversation's scope now, "
            "for the reason given: you cannot unlock or call it. Only the user can change that (by /use of a skill "
            "its granted_by names); say so rather than trying other names for it."
        )
    return " ".join(parts)


def _input_schema(default_max: int, max_limit: int) -> dict[str, Any]:
    """The arguments ``search_tools`` takes, with the limits this instance was built with."""
    return {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "description": "What the tool should do, in a few words, or an exact tool name",
            },
            "queries": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 1,
                "maxItems": MAX_NEEDS,
                "description": "Several needs at once, one short query per step of the task; "
                "each is searched on its own",
            },
            "max": {
                "type": "integer",
                "minimum": 1,
                "maximum": max_limit,
                "description": f"How many tools to return at most per query (default {default_max} "
                f"for one query, {min(NEED_MAX, default_max)} each for several)",
            },
            "server": {"type": "string", "description": "Only tools of this MCP server"},
            "unlock": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "maxItems": max_limit,
                "description": "Names of listed tools to add to your tools",
            },
        },
        "additionalProperties": False,
    }
