"""Slash commands typed by the user: ``/use``, ``/unuse``, ``/skills``, ``/tools``, ``/instructions``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..registry import ToolRegistry, TurnScope
from ..search._internal import McpServedSkill

__all__ = ["HELP", "Command", "describe_skills", "describe_tools", "parse_command"]

HELP = """Commands:
  /use <skill> [arguments]  activate a skill for the following turns
  /unuse                    deactivate the active skill
  /skills                   list the skills
  /tools                    list the tools in scope this turn
  /instructions             show what the model is told (the active skill's body, rendered, and more)"""

CommandName = Literal["use", "unuse", "skills", "tools", "instructions", "help"]
COMMANDS: tuple[CommandName, ...] = ("use", "unuse", "skills", "tools", "instructions", "help")


@dataclass(frozen=True)
class Command:
    """One parsed slash command.

    Attributes:
        name: Which command.
        skill: The skill named by ``/use``.
        arguments: The text after the skill name (``/use``) or after the command.
    """

    name: CommandName
    skill: str | None = None
    arguments: str = ""


def parse_command(text: str) -> Command | None:
    """Return the command in ``text``, or None when it is a message for the model.

    Only the known commands are commands; ``/etc/hosts is missing`` is a message.
    ``/use`` without a skill name becomes ``help``, whose answer says how to use it.
    """
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    word, _, rest = stripped[1:].partition(" ")
    rest = rest.strip()
    if word not in COMMANDS:
        return None
    if word == "use":
        skill, _, arguments = rest.partition(" ")
        if not skill:
            return Command("help", arguments="use")
        return Command("use", skill=skill, arguments=arguments.strip())
    return Command(word, arguments=rest)


class _Skills(Protocol):
    def invocable(self) -> Iterable[Any]: ...


def describe_skills(
    source: _Skills | None, active: Any | None, problem: Callable[[str], str | None] | None = None
) -> str:
    """The answer to ``/skills``: every invocable skill, the active one starred.

    ``problem`` says why a skill cannot work (one of its own servers cannot start); such a
    skill is marked ``!`` and offered with the reason instead of its usage. A skill from an MCP
    server whose allowed-tools wait for the user's approval is marked ``?``, with how to approve them.
    """
    skills = list(source.invocable()) if source else []
    if not skills:
        return "No skills are loaded."
    name = active.name if active is not None else None
    lines = []
    for skill in sorted(skills, key=lambda s: s.name):
        why = problem(skill.name) if problem is not None else None
        if why is not None:
            lines.append(f"! {skill.name} - cannot be used: {why}")
            continue
        waiting = skill.pending_grant if isinstance(skill, McpServedSkill) else None
        marker = "*" if skill.name == name else "?" if waiting else " "
        lines.append(f"{marker} {skill.usage()} - {skill.description}")
        if waiting:
            lines.append(f"    {waiting}")
    return "\n".join(lines)


def describe_tools(registry: ToolRegistry, scope: TurnScope) -> str:
    """The answer to ``/tools``: the tools ``scope`` allows, each with its tier."""
    tools = registry.visible_tools(scope)
    if not tools:
        return "No tools are in scope."
    lines = [f"{len(tools)} tool(s) in scope:"]
    for tool in tools:
        tier = "internal" if registry.is_internal(tool.spec.name) else "global"
        lines.append(f"  {tool.spec.name} ({tier})")
    return "\n".join(lines)
