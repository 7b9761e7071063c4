"""``toolsift skills list|show|new``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .._assembly import skills_loader
from .._folders import find_config
from ..config import load_config
from ..skills import SkillsLoader
from ._app import EXIT, state
from ._output import Output, reported_here

# Registered on the root app when a command of this module runs (see _app.COMMANDS).
commands = typer.Typer(add_completion=False, rich_markup_mode=None)

skills_app = typer.Typer(help="List, show and create skills.", no_args_is_help=True)
commands.add_typer(skills_app, name="skills")

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]

SKELETON = """---
name: {name}
description: Say what this skill does and when to use it.
# Tools the model may see while the skill is active. A pattern that names a server
# (claude-flow__memory_*) also surfaces that internal server's tools.
allowed-tools:
  - read_file
variables:
  task:
    description: What to do, taken from the text after /use {name}
---
You are helping with: {{{{ task }}}}

Explain the steps you take and check your work before you answer.
"""


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
) -> None:
    """Write a SKILL.md skeleton to <skills folder>/NAME/SKILL.md."""
    from ..skills import parse_skill_text

    out = Output()
    if folder is None:
        paths = load_config(find_config(state.config)).skills.paths
        folder = paths[0]
    target = folder / name / "SKILL.md"
    text = SKELETON.format(name=name)
    parse_skill_text(text, target)  # refuses a bad name with the Agent Skills rule in the message
    if target.exists():
        out.error(f"{target} already exists; not overwriting it")
        raise typer.Exit(EXIT["failed"])
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    out.line(f"wrote {target}")
