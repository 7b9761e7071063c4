"""``check``, ``servers``, ``tools``, ``schemas`` and ``call``: look at and use a configuration."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from ..agent import Conversation, result_text
from ..mcp_sessions import validate_config
from ..registry import FORMATS, compile_patterns
from ..search import format_ranking
from ..skills import SkillsLoader, default_user_dir
from ..toolbox import Toolbox, find_config
from ._app import EXIT, app, open_toolbox, run_async, state
from ._output import Output, estimate_tokens

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]
SkillOption = Annotated[str | None, typer.Option("--skill", "-s", help="Act as if '/use SKILL' were active.")]
ArgsOption = Annotated[str, typer.Option("--args", help="Argument text for the skill's variables.")]
AgentOption = Annotated[str | None, typer.Option("--agent", "-a", help="Agent profile from the config.")]


@app.command()
def check(json_mode: JsonOption = False) -> None:
    """Validate the config and the skills; print every problem with its file, line and field."""
    out = Output(json_mode=json_mode)
    report = validate_config(find_config(state.config))
    problems = [{"file": str(p.path or report.path), "line": p.line, "field": p.field, "message": p.reason}
                for p in report.problems]
    warnings = [{"file": str(w.path or report.path), "line": w.line, "field": w.field, "message": w.message}
                for w in report.warnings]
    if report.config is not None:
        skills = report.config.skills
        loader = SkillsLoader(project=skills.paths[0] if skills.paths else None,
                              user=default_user_dir() if skills.user_skills else None, extra=skills.paths[1:])
        for problem in loader.load().problems:
            problems.append({"file": str(problem.path), "line": problem.line, "field": problem.field,
                             "message": problem.message})
    if json_mode:
        out.json({"ok": not problems, "config": str(report.path), "problems": problems, "warnings": warnings})
    else:
        for item in problems:
            out.line(f"problem  {_where(item)}{item['message']}")
        for item in warnings:
            out.line(f"warning  {_where(item)}{item['message']}")
        verdict = "OK" if not problems else f"{len(problems)} problem(s)"
        out.line(f"{report.path}: {verdict}, {len(warnings)} warning(s)", style="green" if not problems else "red")
    raise typer.Exit(EXIT["ok"] if not problems else EXIT["failed"])


def _where(item: dict[str, Any]) -> str:
    line = f":{item['line']}" if item.get("line") else ""
    field = f" {item['field']}:" if item.get("field") and item["field"] not in item["message"] else ""
    return f"{item['file']}{line}:{field} "


@app.command()
def servers(json_mode: JsonOption = False) -> None:
    """Connect every configured server and show its status (transport, visibility, state, tools)."""
    out = Output(json_mode=json_mode)

    async def body() -> int:
        async with open_toolbox(out) as box:
            rows = box.sessions.status()
            if json_mode:
                out.json([{"server": r.server, "transport": r.transport, "visibility": r.visibility,
                           "state": r.state.value, "tools": r.tools, "error": r.error} for r in rows])
            else:
                out.table("MCP servers", ["server", "transport", "visibility", "state", "tools", "error"],
                          [(r.server, r.transport, r.visibility, r.state.value, r.tools, r.error or "")
                           for r in rows])
            return EXIT["failed"] if any(r.error for r in rows) else EXIT["ok"]

    raise typer.Exit(run_async(body))


async def _conversation(box: Toolbox, agent: str | None, skill: str | None, arguments: str) -> Conversation:
    conversation = box.conversation(agent)
    if skill:
        await conversation.use(skill, arguments)
    return conversation


@app.command()
def tools(
    patterns: Annotated[list[str] | None, typer.Argument(help="Globs to filter the names shown.")] = None,
    skill: SkillOption = None,
    arguments: ArgsOption = "",
    agent: AgentOption = None,
    search: Annotated[str | None, typer.Option("--search", "-q", help="Rank every tool and skill for a query.")]
    = None,
    limit: Annotated[int, typer.Option("--limit", help="How many search results.")] = 10,
    json_mode: JsonOption = False,
) -> None:
    """Which tools a turn would see (with --skill, after '/use SKILL'), marked internal or global.

    With --search, the search index's ranking for a query instead (every tool and
    skill, internal ones included, as search_tools sees them before permissions).
    """
    out = Output(json_mode=json_mode)

    async def body() -> None:
        async with open_toolbox(out) as box:
            if search is not None:
                _ranking(out, box, search, limit)
                return
            conversation = await _conversation(box, agent, skill, arguments)
            visible = box.registry.visible_tools(conversation.scope())
            if patterns:
                matcher = compile_patterns(patterns, where="the command line")
                visible = [t for t in visible if matcher.matches(t.spec.name)]
            rows: list[dict[str, Any]] = [{"name": t.spec.name,
                                           "tier": "internal" if box.registry.is_internal(t.spec.name) else "global",
                     "server": t.spec.server, "read_only": t.spec.read_only,
                     "description": t.spec.description.strip().splitlines()[0] if t.spec.description.strip()
                     else ""} for t in visible]
            if json_mode:
                out.json(rows)
                return
            title = f"{len(rows)} tool(s) in scope" + (f" with skill {skill!r}" if skill else "")
            out.table(title, ["name", "tier", "read-only", "description"],
                      [(r["name"], r["tier"], "yes" if r["read_only"] else "", r["description"][:80]) for r in rows])

    run_async(body)


def _ranking(out: Output, box: Toolbox, query: str, limit: int) -> None:
    if not out.json_mode:
        out.line(format_ranking(box.index, query, limit=limit))
        return
    out.json([{"rank": rank, "kind": hit.document.kind, "name": hit.document.name, "server": hit.document.server,
               "score": None if hit.exact else round(hit.score, 4), "exact": hit.exact,
               "summary": hit.document.summary}
              for rank, hit in enumerate(box.index.search(query, limit=limit), start=1)])


@app.command()
def schemas(
    skill: SkillOption = None,
    arguments: ArgsOption = "",
    agent: AgentOption = None,
    format: Annotated[str, typer.Option("--format", "-f", help=f"One of: {', '.join(FORMATS)}.")] = "openai",
    strict: Annotated[bool, typer.Option("--strict", help="OpenAI strict mode.")] = False,
    json_mode: JsonOption = False,
) -> None:
    """The exact tool payload a turn sends, with its size in bytes and estimated tokens."""
    out = Output(json_mode=json_mode)

    async def body() -> None:
        async with open_toolbox(out) as box:
            conversation = await _conversation(box, agent, skill, arguments)
            payload = box.registry.schemas_for_tools(conversation.scope(), format, strict=strict)
            text = json.dumps(payload, ensure_ascii=False)
            size = len(text.encode())
            if json_mode:
                out.json({"format": format, "count": len(payload), "bytes": size,
                          "estimated_tokens": estimate_tokens(text), "schemas": payload})
                return
            out.json(payload)
            out.note(f"{len(payload)} schema(s), {size:,} bytes, ~{estimate_tokens(text):,} tokens ({format})",
                     style=None)

    run_async(body)


@app.command()
def call(
    tool: Annotated[str, typer.Argument(help="Tool name (canonical or a provider alias).")],
    arguments: Annotated[str, typer.Argument(help="Arguments as a JSON object.")] = "{}",
    skill: SkillOption = None,
    skill_arguments: ArgsOption = "",
    agent: AgentOption = None,
    json_mode: JsonOption = False,
) -> None:
    """Call one tool through the five layers, as the model would in the agent's turn."""
    out = Output(json_mode=json_mode)
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as exc:
        out.error(f"arguments for {tool!r} are not valid JSON: {exc}")
        raise typer.Exit(EXIT["usage"]) from None
    if not isinstance(parsed, dict):
        out.error(f"arguments for {tool!r} must be a JSON object, got {type(parsed).__name__}")
        raise typer.Exit(EXIT["usage"])

    async def body() -> int:
        async with open_toolbox(out) as box:
            conversation = await _conversation(box, agent, skill, skill_arguments)
            result = await box.registry.execute(tool, parsed, conversation.scope(), conversation.permissions,
                                                timeout=conversation.limits.call_timeout)
            if json_mode:
                out.json(result.to_mcp().model_dump(mode="json", by_alias=True, exclude_none=True))
            else:
                out.line(result_text(result), style="red" if result.is_error else None)
            return EXIT["failed"] if result.is_error else EXIT["ok"]

    raise typer.Exit(run_async(body))
