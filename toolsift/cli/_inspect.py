"""``check``, ``servers``, ``tools``, ``schemas`` and ``call``: look at and use a configuration."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, cast, get_args

import typer

from .._assembly import skills_loader
from .._exceptions import ConfigError, SkillNotFound, UnknownFormat
from .._folders import find_config
from .._globs import compile_patterns, literal_server
from .._names import split_name
from .._tokens import estimated_tokens
from ..agent import Conversation, result_text
from ..config import ToolsiftConfig, validate_config
from ..mcp_sessions import ClientCallbacks
from ..mcp_sessions._internal import ToolPins
from ..registry import Approver, Tool, TurnScope
from ..registry.formats import FORMATS, get_format
from ..search import SearchIndex
from ..search._internal import BackendName, format_ranking, server_descriptions
from ..toolbox import Toolbox
from ._app import EXIT, open_toolbox, run_async, state
from ._approve import TerminalApprover
from ._coverage import known_tools, pattern_coverage, rule_coverage
from ._elicit import TerminalElicitor, log_printer
from ._hints import internal_hint
from ._output import Output, progress_printer, reported_here

# Registered on the root app when a command of this module runs (see _app.COMMANDS).
commands = typer.Typer(add_completion=False, rich_markup_mode=None)

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]
SkillOption = Annotated[str | None, typer.Option("--skill", "-s", help="Act as if '/use SKILL' were active.")]
ArgsOption = Annotated[
    str,
    typer.Option(
        "--args", help="Argument text for the skill's variables; when given, checked as '/use SKILL ARGS' would be."
    ),
]
AgentOption = Annotated[str | None, typer.Option("--agent", "-a", help="Agent profile from the config.")]


@commands.command()
def check(
    json_mode: JsonOption = False,
    resolve: Annotated[
        bool,
        typer.Option("--resolve", help="Also resolve ${VAR} and secret:// references now (values are never printed)."),
    ] = False,
) -> None:
    """Validate the config and the skills; print every problem with its file, line and field.

    Warns, too, about skills that load with warnings, and about skill patterns and
    permission globs that match none of the tools known without starting a server.
    """
    out = Output(json_mode=json_mode)
    path = find_config(state.config)
    report = validate_config(path, resolve_references=resolve)
    problems = [
        {"file": str(p.path or report.path), "line": p.line, "field": p.field, "message": p.reason}
        for p in report.problems
    ]
    warnings = [
        {"file": str(w.path or report.path), "line": w.line, "field": w.field, "message": w.message}
        for w in report.warnings
    ]
    hints = []
    if report.config is not None:
        from .._skill_servers import load_plugins

        # Plugins bring skills and servers: read once, for the skills and for what their servers mean.
        plugins, plugin_problems = load_plugins(report.config.skills.plugins)
        problems += [
            {"file": str(p.path or report.path), "line": p.line, "field": p.field, "message": p.reason}
            for p in plugin_problems
        ]
        with reported_here("toolsift.skills"):
            loaded = skills_loader(report.config, plugins=plugins).load()
        for problem in loaded.problems:
            problems.append(
                {"file": str(problem.path), "line": problem.line, "field": problem.field, "message": problem.reason}
            )
        warnings += [
            {"file": str(w.path), "line": w.line, "field": w.field, "message": w.reason} for w in loaded.warnings
        ]
        from .._assembly import unprovided_skill_tools
        from .._skill_servers import check_skill_servers, with_skill_servers

        known = known_tools(path.parent)
        coverage = pattern_coverage(loaded, with_skill_servers(report.config, loaded, plugins), known)
        rules, rules_hint = rule_coverage(report.config, known)
        warnings += coverage.unmatched + rules
        owned_problems, owned_warnings = check_skill_servers(loaded, plugins, report.config)
        problems += [{"file": str(f), "line": None, "field": None, "message": m} for f, m in owned_problems]
        warnings += [{"file": str(f), "line": None, "field": None, "message": m} for f, m in owned_warnings]

        warnings += [
            {"file": str(w.path), "line": None, "field": w.field, "message": w.message}
            for w in unprovided_skill_tools(report.config, loaded)
        ]
        hints = [hint for hint in (internal_hint(report.config.servers.values()), coverage.hint(), rules_hint) if hint]
        held, broken = _held_tools(report.config)
        warnings += held
        problems += broken
    if json_mode:
        out.json(
            {
                "ok": not problems,
                "config": str(report.path),
                "format": report.dialect,
                "problems": problems,
                "warnings": warnings,
                "hints": hints,
            }
        )
    else:
        for item in problems:
            out.line(f"problem  {_where(item)}{item['message']}")
        for item in warnings:
            out.line(f"warning  {_where(item)}{item['message']}")
            for line in str(item.get("diff") or "").splitlines():
                out.line(f"           {line}")
        for hint in hints:
            out.line(f"hint     {hint}")
        verdict = "OK" if not problems else f"{len(problems)} problem(s)"
        read_as = f" (read as a {report.dialect} file)" if report.dialect != "toolsift" else ""
        out.line(
            f"{report.path}{read_as}: {verdict}, {len(warnings)} warning(s)", style="green" if not problems else "red"
        )
    raise typer.Exit(EXIT["ok"] if not problems else EXIT["failed"])


def _held_tools(config: ToolsiftConfig) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Warnings for tools changed since pinned (with their diff); a problem for an unreadable pin file."""
    try:
        changes = ToolPins.for_config(config).changes()
    except ConfigError as exc:
        return [], [{"file": str(exc.path), "line": None, "field": None, "message": exc.reason}]
    return [
        {
            "file": str(config.path),
            "line": None,
            "field": None,
            "message": f"tool {change.tool!r} of server {change.server!r} changed its definition since it was "
            f"pinned ({change.pinned[:19]} -> {change.listed[:19]}); "
            + (
                "it is held back until accepted"
                if change.server not in config.servers or config.servers[change.server].pin_tools == "hold"
                else "it is kept usable (pinTools: warn)"
            )
            + f" with 'toolsift trust --tools {change.server}'",
            "diff": change.diff,
        }
        for change in changes
    ], []


def _where(item: dict[str, Any]) -> str:
    line = f":{item['line']}" if item.get("line") else ""
    field = f" {item['field']}:" if item.get("field") and item["field"] not in item["message"] else ""
    return f"{item['file']}{line}:{field} "


@commands.command()
def servers(json_mode: JsonOption = False) -> None:
    """Connect every configured server and show its status (transport, visibility, state, tools)."""
    out = Output(json_mode=json_mode)

    async def body() -> int:
        async with open_toolbox(out, report_failures=False) as box:  # the table says which failed
            rows = _server_rows(box)
            if json_mode:
                out.json(rows)
            else:
                columns = ["server", "transport", "visibility", "state", "tools", "error"]
                out.table(
                    "MCP servers", columns, [[row[c] if row[c] is not None else "" for c in columns] for row in rows]
                )
            hint = internal_hint(box.sessions.servers.values())
            if hint:
                out.note(hint, style=None)
            if box.dropped:
                return EXIT["config"]
            # A lazy server waiting for its first need is idle by design, not failed.
            return EXIT["failed"] if any(row["error"] and row["state"] != "idle" for row in rows) else EXIT["ok"]

    raise typer.Exit(run_async(body))


def _server_rows(box: Toolbox) -> list[dict[str, Any]]:
    """Every server of the file: its sessions, the disabled ones, and those left out for a problem in their entry."""
    rows: list[dict[str, Any]] = [
        {
            "server": r.server,
            "transport": r.transport,
            "visibility": r.visibility,
            "state": r.state.value,
            "tools": r.tools,
            "error": r.error,
        }
        for r in box.sessions.status()
    ]
    configs = box.sessions.servers
    for name, reason in box.sessions.skipped.items():
        config = configs.get(name)
        disabled = config is not None and not config.enabled
        rows.append(
            {
                "server": name,
                "transport": config.transport_kind if config else None,
                "visibility": None if config is None else "internal" if config.internal_only else "global",
                "state": "disabled" if disabled else "skipped",
                "tools": 0,
                "error": None if disabled else reason,
            }
        )
    rows += [
        {"server": name, "transport": None, "visibility": None, "state": "dropped", "tools": 0, "error": reason}
        for name, reason in box.dropped.items()
    ]
    return sorted(rows, key=lambda row: str(row["server"]))


async def _conversation(
    box: Toolbox, agent: str | None, skill: str | None, arguments: str, approver: Approver | None = None
) -> tuple[Conversation, TurnScope]:
    """The agent's conversation and the scope of a turn with ``skill`` active.

    The scope comes from the skill's front matter, so no variables are needed to
    see it; argument text, when given, is bound and rendered as ``/use`` would.
    """
    conversation = box.conversation(agent, approver=approver)
    if not skill:
        return conversation, conversation.scope()
    if arguments:
        await conversation.use(skill, arguments)
        return conversation, conversation.scope()
    catalog = box.catalog
    found = catalog.get(skill)
    if not found.user_invocable:
        raise SkillNotFound(skill, [s.name for s in catalog.invocable()])
    # Pinned and unlocked tools depend on the skill (search_tools is offered only without one): start from
    # the agent's base scope and let the conversation's discovery add them, as a real turn does.
    base = TurnScope(
        agent_allowed=conversation.allowed_tools,
        agent=conversation.agent,
        read_only=conversation.plan_mode,
        skill_allowed=found.allowed_tools,
        skill_disallowed=found.disallowed_tools,
        skill=found.name,
    )
    discovery = conversation.discovery
    return conversation, discovery.scope_for_turn(base) if discovery is not None else base


def _server_of(tool: str) -> Callable[[ToolsiftConfig], set[str] | None]:
    """The server a call needs: the one whose namespace prefixes the tool's name (``/use`` starts the skill's).

    Without one (a bare name, or a prefix no server has), the name may be a provider alias of any server's tool.
    """

    def needs(config: ToolsiftConfig) -> set[str] | None:
        namespace = split_name(tool)[0]
        return {namespace} if namespace in {server.namespace for server in config.servers.values()} else None

    return needs


def _named_servers(patterns: list[str] | None, skill: str | None) -> Callable[[ToolsiftConfig], set[str] | None]:
    """The servers a listing needs: those its patterns and its skill's allowed-tools name literally.

    Neither given (or a skill that is no SKILL.md file ``/use`` offers, such as a server's prompt): every server.
    """

    def needs(config: ToolsiftConfig) -> set[str] | None:
        if not patterns and not skill:
            return None
        named = list(patterns or ())
        if skill:
            with reported_here("toolsift.skills"):
                loaded = skills_loader(config).load()
            found = next((s for s in loaded if s.name == skill and s.user_invocable), None)
            if found is None:  # a server's prompt, or a refusal whose message lists every skill /use offers
                return None
            named += found.allowed_tools
        return {server for pattern in named if (server := literal_server(pattern))}

    return needs


@commands.command()
def tools(
    # Out of the Arguments list (where its type would read "list[str]"): the docstring says what PATTERN does.
    patterns: Annotated[list[str] | None, typer.Argument(metavar="PATTERN", hidden=True)] = None,
    skill: SkillOption = None,
    arguments: ArgsOption = "",
    agent: AgentOption = None,
    search: Annotated[str | None, typer.Option("--search", "-q", help="Rank every tool and skill for a query.")] = None,
    limit: Annotated[int, typer.Option("--limit", help="How many search results.")] = 10,
    backend: Annotated[
        str | None,
        typer.Option(
            "--backend",
            help=f"Ranking for --search: one of {', '.join(get_args(BackendName))} (default: the config's).",
        ),
    ] = None,
    json_mode: JsonOption = False,
) -> None:
    """Which tools a turn would see (with --skill, after '/use SKILL'), marked internal or global.

    PATTERN: globs that filter the names shown (server__*). Starts the servers the patterns and the
    skill's allowed-tools name; with neither, or with --search, every server not marked lazy.

    With --search, the search index's ranking for a query instead (every tool and
    skill, internal ones included, as search_tools sees them before permissions).
    """
    out = Output(json_mode=json_mode)
    if backend is not None and backend not in get_args(BackendName):
        out.error(f"--backend: unknown search backend {backend!r}; available: {', '.join(get_args(BackendName))}")
        raise typer.Exit(EXIT["usage"])

    async def body() -> None:
        # A search ranks every tool; a listing needs only the servers it names.
        async with open_toolbox(out, needs=_named_servers(None if search is not None else patterns, skill)) as box:
            if search is not None:
                _ranking(out, box, search, limit, backend)
                return
            _, scope = await _conversation(box, agent, skill, arguments)
            visible = box.registry.visible_tools(scope)
            shown = {t.spec.name for t in visible}
            hidden = [t for t in box.registry.tools() if t.spec.name not in shown]
            if patterns:
                matcher = compile_patterns(patterns, where="the command line")
                visible = [t for t in visible if matcher.matches(t.spec.name)]
                hidden = [t for t in hidden if matcher.matches(t.spec.name)]
            rows: list[dict[str, Any]] = [
                {
                    "name": t.spec.name,
                    "tier": "internal" if box.registry.is_internal(t.spec.name) else "global",
                    "server": t.spec.server,
                    "read_only": t.spec.read_only,
                    "description": t.spec.description.strip().splitlines()[0] if t.spec.description.strip() else "",
                }
                for t in visible
            ]
            if json_mode:
                out.json(rows)
                return
            title = f"{len(rows)} tool(s) in scope" + (f" with skill {skill!r}" if skill else "")
            out.table(
                title,
                ["name", "tier", "read-only", "description"],
                [(r["name"], r["tier"], "yes" if r["read_only"] else "", r["description"][:80]) for r in rows],
            )
            if hidden:
                out.note(_hidden_note(box, hidden, skill), style="yellow")

    run_async(body)


def _hidden_note(box: Toolbox, hidden: list[Tool], skill: str | None) -> str:
    """Which tools (of those the patterns match) are not in the turn, why, and how to see them."""
    internal = [t for t in hidden if t.spec.server and box.registry.is_internal(t.spec.name)]
    servers = sorted({t.spec.server for t in internal if t.spec.server})
    turn = f"the turn of skill {skill!r}" if skill else "a turn with no skill"
    parts = []
    if internal:
        parts.append(
            f"{len(internal)} tool(s) of internal server(s) {', '.join(servers)} are hidden from {turn}: "
            f"a skill whose allowed-tools names the server ({servers[0] + '__*'!r}) or a search reaches them; "
            f"see them with 'toolsift tools --search QUERY', or set \"internalOnly\": false on the server "
            f"to show its tools in every turn"
        )
    if left_out := len(hidden) - len(internal):
        parts.append(f"{left_out} tool(s) are left out of {turn} by the agent's or the skill's allowed-tools")
    return "; ".join(parts)


def _ranking(out: Output, box: Toolbox, query: str, limit: int, backend: str | None) -> None:
    index = box.index
    if backend is not None and backend != index.backend:
        # Raises ConfigError, saying how to install the semantic backends, when they are missing.
        index = SearchIndex(
            box.registry,
            box.catalog,
            unsearchable=index.unsearchable,
            backend=cast(BackendName, backend),
            server_descriptions=lambda: server_descriptions(box.sessions),
        )
    if not out.json_mode:
        out.line(format_ranking(index, query, limit=limit))
        return
    out.json(
        [
            {
                "rank": rank,
                "kind": hit.document.kind,
                "name": hit.document.name,
                "server": hit.document.server,
                "servers": hit.servers,
                "score": None if hit.exact else round(hit.score, 4),
                "exact": hit.exact,
                "summary": hit.document.summary,
            }
            for rank, hit in enumerate(index.search(query, limit=limit), start=1)
        ]
    )


@commands.command()
def schemas(
    skill: SkillOption = None,
    arguments: ArgsOption = "",
    agent: AgentOption = None,
    format: Annotated[str, typer.Option("--format", "-f", help=f"One of: {', '.join(FORMATS)}.")] = "openai",
    strict: Annotated[bool, typer.Option("--strict", help="OpenAI strict mode.")] = False,
    json_mode: JsonOption = False,
) -> None:
    """The exact tool payload a turn sends, with its size in bytes and estimated tokens.

    Starts the servers the skill's allowed-tools name (server__...); without --skill, every server not
    marked lazy.
    """
    out = Output(json_mode=json_mode)
    try:
        chosen = get_format(format)
    except UnknownFormat as exc:
        raise typer.BadParameter(str(exc), param_hint="'--format'") from None
    if strict and not getattr(chosen, "strict_mode", False):
        raise typer.BadParameter(
            f"format {format!r} has no strict mode; it goes with -f openai or -f openai-responses",
            param_hint="'--strict'",
        )

    async def body() -> None:
        async with open_toolbox(out, needs=_named_servers(None, skill)) as box:
            _, scope = await _conversation(box, agent, skill, arguments)
            payload = box.registry.schemas_for_tools(scope, format, strict=strict)
            text = json.dumps(payload, ensure_ascii=False)
            size = len(text.encode())
            if json_mode:
                out.json(
                    {
                        "format": format,
                        "count": len(payload),
                        "bytes": size,
                        "estimated_tokens": estimated_tokens(text),
                        "schemas": payload,
                    }
                )
                return
            out.json(payload)
            out.note(
                f"{len(payload)} schema(s), {size:,} bytes, ~{estimated_tokens(text):,} tokens ({format})", style=None
            )

    run_async(body)


@commands.command()
def call(
    tool: Annotated[str, typer.Argument(metavar="TOOL", help="Tool name (server__tool, or a provider alias).")],
    arguments: Annotated[str, typer.Argument(metavar="JSON", help="Arguments as a JSON object.")] = "{}",
    skill: SkillOption = None,
    skill_arguments: ArgsOption = "",
    agent: AgentOption = None,
    json_mode: JsonOption = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Approve a call that the agent's ask rules hold back, without asking.")
    ] = False,
) -> None:
    """Call one tool through the five layers, as the model would in the agent's turn.

    Starts only the tool's server (SERVER__TOOL), and those the skill names. A call that an ask rule
    holds back is asked on the terminal (or approved by --yes).
    """
    out = Output(json_mode=json_mode)
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as exc:
        out.error(f"arguments for {tool!r} are not valid JSON: {exc}")
        raise typer.Exit(EXIT["usage"]) from None
    if not isinstance(parsed, dict):
        out.error(f"arguments for {tool!r} must be a JSON object, got {type(parsed).__name__}")
        raise typer.Exit(EXIT["usage"])

    callbacks = ClientCallbacks(elicitation=TerminalElicitor(out), logging=log_printer(out), log_level="info")

    async def body() -> int:
        async with open_toolbox(out, callbacks, _server_of(tool)) as box:
            approver = TerminalApprover(out, assume_yes=yes, mask=box.sessions.mask_secrets)
            conversation, scope = await _conversation(box, agent, skill, skill_arguments, approver)
            result = await box.registry.execute(
                tool,
                parsed,
                scope,
                conversation.permissions,
                timeout=conversation.limits.call_timeout,
                progress=progress_printer(out, tool),
            )
            if json_mode:
                out.json(result.to_mcp().model_dump(mode="json", by_alias=True, exclude_none=True))
            else:
                out.line(result_text(result), style="red" if result.is_error else None)
            return EXIT["failed"] if result.is_error else EXIT["ok"]

    raise typer.Exit(run_async(body))
