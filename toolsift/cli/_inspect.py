"""``servers``, ``tools`` and ``schemas``: what a configuration connects, and what a turn of it sees and sends."""

from __future__ import annotations

import json
from typing import Annotated, Any, cast, get_args

import typer

from .._exceptions import UnknownFormat
from .._globs import compile_patterns
from .._tokens import estimated_tokens
from ..registry import Tool, TurnScope
from ..registry.formats import FORMATS, get_format
from ..search import SearchIndex
from ..search._internal import BackendName, format_ranking, server_descriptions
from ..toolbox import Toolbox
from ._app import EXIT, run_async
from ._hints import internal_hint
from ._output import JsonOption, Output
from ._toolbox import open_toolbox
from ._turn import AgentOption, ArgsOption, SkillOption, named_servers, turn_conversation

# Registered on the root app when a command of this module runs (see _app.COMMANDS).
commands = typer.Typer(add_completion=False, rich_markup_mode=None)


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
        async with open_toolbox(out, needs=named_servers(None if search is not None else patterns, skill)) as box:
            if search is not None:
                _ranking(out, box, search, limit, backend)
                return
            _, scope = await turn_conversation(box, agent, skill, arguments)
            _list_tools(out, box, scope, patterns, skill)

    run_async(body)


def _list_tools(out: Output, box: Toolbox, scope: TurnScope, patterns: list[str] | None, skill: str | None) -> None:
    """The tools a turn with ``scope`` sees (those ``patterns`` match), and a note on the ones it does not."""
    visible = box.registry.visible_tools(scope)
    shown = {t.spec.name for t in visible}
    hidden = [t for t in box.registry.tools() if t.spec.name not in shown]
    catalogued: list[Tool] = []
    if patterns:
        matcher = compile_patterns(patterns, where="the command line")
        visible = [t for t in visible if matcher.matches(t.spec.name)]
        hidden = [t for t in hidden if matcher.matches(t.spec.name)]
        # Named on purpose (to write allowed-tools, say): internal tools hidden only for being internal are listed.
        catalogued = [t for t in hidden if _only_internal(box, t, scope)]
        hidden = [t for t in hidden if t not in catalogued]
    rows = [_row(box, t, in_turn=True) for t in visible] + [_row(box, t, in_turn=False) for t in catalogued]
    if out.json_mode:
        out.json(rows)
        return
    title = f"{len(visible)} tool(s) in scope" + (f" with skill {skill!r}" if skill else "")
    if catalogued:
        title += f", {len(catalogued)} of internal servers outside it (a skill naming the server shows them)"
    out.table(
        title,
        ["name", "tier", "read-only", "description"],
        [(r["name"], _tier_shown(r), "yes" if r["read_only"] else "", r["description"][:80]) for r in rows],
    )
    if hidden:
        out.note(_hidden_note(box, hidden, skill), style="yellow")


def _only_internal(box: Toolbox, tool: Tool, scope: TurnScope) -> bool:
    """Whether the tool is out of the turn only because its server is internal (layer 1)."""
    name = tool.spec.name
    return box.registry.is_internal(name) and box.registry.hidden_reason(name, scope.with_unlocked([name])) is None


def _row(box: Toolbox, tool: Tool, *, in_turn: bool) -> dict[str, Any]:
    spec = tool.spec
    return {
        "name": spec.name,
        "tier": "internal" if box.registry.is_internal(spec.name) else "global",
        "in_turn": in_turn,
        "server": spec.server,
        "read_only": spec.read_only,
        "description": spec.description.strip().splitlines()[0] if spec.description.strip() else "",
    }


def _tier_shown(row: dict[str, Any]) -> str:
    return str(row["tier"]) if row["in_turn"] else f"{row['tier']}, not in this turn"


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
        async with open_toolbox(out, needs=named_servers(None, skill)) as box:
            _, scope = await turn_conversation(box, agent, skill, arguments)
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
