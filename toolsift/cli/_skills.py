"""``toolsift skills list|show|new``, and ``grants|approve`` for the skills MCP servers offer."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .._assembly import skills_loader
from .._exceptions import ConfigError, SkillNotFound
from .._files import OwnFile
from .._folders import find_config
from ..config import SkillGrants, load_config
from ..mcp_sessions._internal import SessionState
from ..skills import SkillsLoader
from ._app import EXIT, run_async, state
from ._output import JsonOption, Output, reported_here
from ._toolbox import open_toolbox

if TYPE_CHECKING:
    from ..config import ToolsiftConfig
    from ..search._internal import McpServedSkill

# Registered on the root app when a command of this module runs (see _app.COMMANDS).
commands = typer.Typer(add_completion=False, rich_markup_mode=None)

skills_app = typer.Typer(
    help="List, show and create skills; see and approve the tools skills from MCP servers ask for.",
    no_args_is_help=True,
)
commands.add_typer(skills_app, name="skills")


SKELETON = """---
name: {name}
description: {description}
# Tools the model may see while the skill is active. A pattern that names a server
# (claude-flow__memory_*) also surfaces that internal server's tools.
allowed-tools:
{tools}
variables:
  task:
    description: What to do, taken from the text after /use {name} (optional)
    required: false
---
{{% if task %}}You are helping with: {{{{ task }}}}

{{% endif %}}Explain the steps you take and check your work before you answer.
"""
DEFAULT_DESCRIPTION = "Say what this skill does and when to use it."


def skeleton(name: str, description: str | None, tools: Sequence[str]) -> str:
    """A SKILL.md that ``/use NAME`` activates as it is, with or without text after the name."""
    listed = [pattern for given in tools for pattern in given.split()] or ["read_file"]
    return SKELETON.format(
        name=name,
        description=json.dumps(description or DEFAULT_DESCRIPTION),  # a YAML string, whatever it holds
        tools="\n".join(f"  - {json.dumps(pattern)}" for pattern in listed),
    )


def _loader() -> SkillsLoader:
    return skills_loader(load_config(find_config(state.config)))


@skills_app.command("list")
def list_skills(json_mode: JsonOption = False) -> None:
    """Every skill found, with its tools; problems and warnings go to stderr."""
    out = Output(json_mode=json_mode)
    with reported_here("toolsift.skills"):
        loaded = _loader().load()
    rows: list[dict[str, Any]] = [
        {
            "name": s.name,
            "display_name": s.display_name,
            "description": s.description,
            "allowed_tools": list(s.allowed_tools),
            "user_invocable": s.user_invocable,
            "path": str(s.path),
        }
        for s in loaded
    ]
    if json_mode:
        out.json(
            {
                "skills": rows,
                "problems": [{"path": str(p.path), "message": p.message} for p in loaded.problems],
                "warnings": [{"path": str(w.path), "message": w.message} for w in loaded.warnings],
            }
        )
    else:
        out.table(
            f"{len(rows)} skill(s)",
            ["name", "allowed-tools", "description"],
            [
                (
                    r["name"] + (f" ({r['display_name']})" if r["display_name"] else ""),
                    ", ".join(r["allowed_tools"]) or "(no limit)",
                    str(r["description"])[:70],
                )
                for r in rows
            ],
        )
        for problem in loaded.problems:
            out.note(f"problem: {problem.message}", style="yellow")
        for warning in loaded.warnings:
            out.note(f"warning: {warning.message}", style="yellow")


@skills_app.command("show")
def show(name: Annotated[str, typer.Argument(help="The skill's name.")], json_mode: JsonOption = False) -> None:
    """One skill's fields and body."""
    out = Output(json_mode=json_mode)
    skill = _loader().get(name)
    if json_mode:
        out.json(skill.model_dump(mode="json", exclude={"template"}))
        return
    out.line(f"{skill.usage()}  ({skill.path})", style="bold")
    out.line(skill.description)
    out.line(f"allowed-tools: {', '.join(skill.allowed_tools) or '(no limit)'}")
    if skill.disallowed_tools:
        out.line(f"disallowed-tools: {', '.join(skill.disallowed_tools)}")
    for variable in skill.variables.values():
        need = "required" if variable.required else f"default {variable.fallback!r}"
        out.line(f"variable {variable.name} ({need}): {variable.description}")
    out.line()
    out.line(skill.body)


@skills_app.command("new")
def new(
    name: Annotated[str, typer.Argument(help="Lowercase letters, digits and hyphens.")],
    folder: Annotated[Path | None, typer.Option("--dir", help="Skill folder (default: the config's first).")] = None,
    description: Annotated[
        str | None, typer.Option("--description", "-d", help="When to use it (its front matter's description).")
    ] = None,
    tools: Annotated[
        list[str] | None,
        typer.Option("--tools", "-t", help="allowed-tools patterns, repeatable or space-separated (general__*)."),
    ] = None,
) -> None:
    """Write a SKILL.md skeleton to <skills folder>/NAME/SKILL.md; /use NAME works on it as it is."""
    from ..skills._internal import parse_skill_text

    out = Output()
    if folder is None:
        paths = load_config(find_config(state.config)).skills.paths
        folder = paths[0]
    target = folder / name / "SKILL.md"
    text = skeleton(name, description, tools or [])
    parse_skill_text(text, target)  # refuses a bad name (the Agent Skills rule) or pattern, saying which
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        OwnFile(target, what="the skill").create_new(text)
    except FileExistsError:
        out.error(f"{target} already exists; not overwriting it")
        raise typer.Exit(EXIT["failed"]) from None
    out.line(f"wrote {target}")


def _served_by(servers: Sequence[str]) -> Callable[[ToolsiftConfig], set[str] | None]:
    """The servers to start to see ``servers``' skills (lazy ones included); none named: what the config starts."""

    def needs(config: ToolsiftConfig) -> set[str] | None:
        unknown = [name for name in servers if name not in config.servers]
        if unknown:
            known = ", ".join(sorted(config.servers)) or "none"
            raise ConfigError(f"no server {unknown[0]!r} in this config (its servers: {known})", path=config.path)
        return {config.servers[name].namespace for name in servers} if servers else None

    return needs


def _grant_state(skill: McpServedSkill, grants: SkillGrants | None) -> tuple[str, list[str]]:
    """Whether the skill's allowed-tools are approved, and what changed since an approval that no longer covers it."""
    if not skill.requested_tools:
        return "nothing to approve", []
    if skill.approved:
        return "approved", []
    try:
        grant = grants.grant(skill.server, skill.uri) if grants is not None else None
    except ConfigError:  # already said when the skill was taken: an unreadable store approves nothing
        return "not approved", []
    if grant is None:
        return "not approved", []
    return "changed since approval", grant.changes(skill.resources, skill.requested_tools)


@skills_app.command("grants")
def grants(
    servers: Annotated[
        list[str] | None,
        typer.Argument(metavar="[SERVER]...", help="Only these servers, lazy ones too (default: those started)."),
    ] = None,
    json_mode: JsonOption = False,
) -> None:
    """The skills MCP servers offer, the allowed-tools each asks for, and whether you approved them.

    A served skill's allowed-tools are not in force until you approve them with 'toolsift skills
    approve SERVER/SKILL'; the approval holds for the skill's files as they are now (by digest), so a
    skill that changed is shown with what changed and asks again. Starts only the servers named (or,
    naming none, those the config starts: a lazy server's skills are listed once it is named).
    """
    out = Output(json_mode=json_mode)
    wanted = tuple(servers or ())

    async def body() -> list[dict[str, Any]]:
        async with open_toolbox(out, needs=_served_by(wanted)) as box:
            served = box.served_skills
            rows = []
            for skill in served.skills:
                if wanted and skill.server not in wanted:
                    continue
                status, changes = _grant_state(skill, served.grants)
                rows.append(
                    {
                        "name": skill.name,
                        "server": skill.server,
                        "uri": skill.uri,
                        "allowed_tools": list(skill.requested_tools),
                        "grant": status,
                        "changes": changes,
                    }
                )
            return rows

    rows = run_async(body)
    if json_mode:
        out.json({"skills": rows})
        return
    if not rows:
        out.line("No server offers skills (the MCP Skills extension).")
        return
    out.table(
        f"{len(rows)} skill(s) from MCP servers",
        ["skill", "allowed-tools asked for", "grant", "uri"],
        [(r["name"], ", ".join(r["allowed_tools"]) or "(none)", r["grant"], r["uri"]) for r in rows],
    )
    for row in rows:
        if row["changes"]:
            out.line(f"{row['name']} changed since you approved it:", style="yellow")
            for change in row["changes"]:
                out.line(f"  {change}")
    waiting = [r["name"] for r in rows if r["grant"] in ("not approved", "changed since approval")]
    if waiting:
        out.line(f"Approve a skill's allowed-tools with 'toolsift skills approve {waiting[0]}'.")


@skills_app.command("approve")
def approve(
    name: Annotated[str, typer.Argument(metavar="SERVER/SKILL", help="The skill, as 'skills grants' names it.")],
    revoke: Annotated[bool, typer.Option("--revoke", help="Forget the approval instead (starts nothing).")] = False,
) -> None:
    """Approve the allowed-tools a skill from an MCP server asks for, for its files as they are now.

    Starts only that skill's server. If a file of the skill changes, a file is added or removed, or it
    asks for other tools, the approval stops covering it and it asks again.
    """
    out = Output()
    server = name.partition("/")[0]
    if revoke:
        _revoke(out, SkillGrants(), name)
        return

    async def body() -> None:
        async with open_toolbox(out, needs=_served_by([server])) as box:
            served = box.served_skills
            skills = [skill for skill in served.skills if skill.server == server]
            skill = next((skill for skill in skills if skill.name == name), None)
            if skill is None:
                session = box.sessions.get(server)
                if session is None or session.state is not SessionState.READY:
                    why = session.reason if session is not None and session.reason else "it did not start"
                    out.error(f"server {server!r} is not connected ({why}), so its skills cannot be approved")
                    raise typer.Exit(EXIT["failed"])
                raise SkillNotFound(name, [skill.name for skill in skills])
            grants = served.grants if served.grants is not None else SkillGrants()
            status, changes = _grant_state(skill, grants)
            out.line(f"{skill.name}: {skill.uri} on MCP server {server!r}", style="bold")
            if status == "nothing to approve":
                out.line("It asks for no allowed-tools: there is nothing to approve.")
                return
            out.line(f"allowed-tools: {', '.join(skill.requested_tools)}")
            for change in changes:
                out.line(f"  {change} (since the approval before)")
            out.line(f"files ({len(skill.resources)}):")
            for uri, digest in sorted(skill.resources.items()):
                out.line(f"  {uri} {digest}")
            grants.approve(server, skill.uri, skill.resources, skill.requested_tools)
            out.line(
                f"{'Already approved; recorded again' if status == 'approved' else 'Approved'} for these files: "
                "if one changes, or the skill asks for other tools, it asks again."
            )

    run_async(body)


def _revoke(out: Output, grants: SkillGrants, name: str) -> None:
    """Forget the approvals ``name`` picks out: by its skill path, or by its last part when only one has it."""
    server, _, rest = name.partition("/")
    recorded = {f"{grant.server}/{_skill_path(grant.uri)}": grant for grant in grants.recorded()}
    if not recorded:
        out.line(f"{name}: no approval was ever given")
        return
    picked = [grant for full, grant in recorded.items() if full == name]
    if not picked:
        picked = [
            grant
            for grant in recorded.values()
            if grant.server == server and _skill_path(grant.uri).endswith(f"/{rest}")
        ]
    if not picked:
        raise SkillNotFound(name, list(recorded))
    if len(picked) > 1:
        names = ", ".join(repr(f"{grant.server}/{_skill_path(grant.uri)}") for grant in picked)
        out.error(f"{name!r} names more than one approved skill ({names}); name one of them")
        raise typer.Exit(EXIT["refused"])
    grant = picked[0]
    grants.revoke(grant.server, grant.uri)
    out.line(f"{grant.server}/{_skill_path(grant.uri)}: approval of {', '.join(grant.allowed_tools)} forgotten")


def _skill_path(uri: str) -> str:
    """``skill://acme/billing/refunds/SKILL.md`` -> ``acme/billing/refunds``."""
    return uri.removesuffix("/SKILL.md").partition("://")[2]
