"""Skills as served tools: ``skill__<name>``, arguments = variables, result = instructions + tools.

An MCP client has no ``/use``; calling the skill's tool is how it asks for
the skill. The result is the rendered body (what the model should do) and the
served tools that match the skill's ``allowed-tools`` (what it should do it with).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, final

import mcp.types as mcp_types

from .._exceptions import SkillRenderError
from ..builtins._internal import FolderFiles
from ..registry import Level, ToolContext, ToolResult, ToolSpec
from ..skills import Skill

__all__ = ["SKILL_NAMESPACE", "FilesOf", "SkillTool", "skill_tools"]

SKILL_NAMESPACE = "skill"
#: Given a skill, the served names of the tools its patterns allow.
ToolsFor = Callable[[Skill], list[str]]
#: Given a skill, its files on disk (None when it has none).
FilesOf = Callable[[Skill], FolderFiles | None]


def _schema(skill: Skill) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for variable in skill.variables.values():
        prop: dict[str, Any] = {"type": "string"}
        if variable.description:
            prop["description"] = variable.description
        if variable.default is not None:
            prop["default"] = variable.default
        properties[variable.name] = prop
    properties["arguments"] = {
        "type": "string",
        "description": "Free-form request text for the skill",
    }
    required = [v.name for v in skill.variables.values() if v.required]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


@final
class SkillTool:
    """One user-invocable skill as a read-only tool.

    Args:
        skill: The skill.
        tools_for: Lists the served tools the skill's patterns allow, at call time.
        files_of: The skill's files, whose URIs the result names.
    """

    def __init__(self, skill: Skill, tools_for: ToolsFor, files_of: FilesOf) -> None:
        self._skill = skill
        self._tools_for = tools_for
        self._files_of = files_of
        self._spec = ToolSpec(
            name=f"{SKILL_NAMESPACE}__{skill.name}",
            description=f"{skill.description}\n\nReturns the skill's instructions and the tools to use with them.",
            input_schema=_schema(skill),
            title=f"Skill: {skill.name}",
            annotations=mcp_types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
            source="skill",
            required_level=Level.READ,
            read_only=True,
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool's static description."""
        return self._spec

    def __repr__(self) -> str:
        return f"SkillTool({self._skill.name!r})"

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Render the skill with ``args`` and list the tools it works with."""
        skill = self._skill
        try:
            instructions = await skill.render(args)
        except SkillRenderError as exc:
            return ToolResult.error(str(exc))
        tools = self._tools_for(skill)
        if not skill.allowed_tools:
            footer = "The skill does not limit which tools to use."
        elif tools:
            footer = f"Tools for this skill: {', '.join(tools)}"
        else:
            footer = (
                f"None of the tools this server offers match the skill's allowed-tools "
                f"({', '.join(skill.allowed_tools)})."
            )
        structured: dict[str, Any] = {
            "skill": skill.name,
            "instructions": instructions,
            "allowed_tools": list(skill.allowed_tools),
            "tools": tools,
        }
        files = _bundled(skill, self._files_of(skill))
        if files:
            # Its references resolve against its root; the files are this server's resources.
            footer += f"\nFiles of this skill (read them with resources/read): {', '.join(files)}"
            structured["files"] = files
        return ToolResult.text(f"{instructions.rstrip()}\n\n---\n{footer}", structured=structured)


def _bundled(skill: Skill, files: FolderFiles | None) -> list[str]:
    """The URIs of the files a skill on disk bundles beside its SKILL.md (see ``_skill_extension``)."""
    names = files.names() if files is not None else []
    return [f"skill://{skill.name}/{name}" for name in names if name != "SKILL.md"]


def skill_tools(skills: Iterable[Skill], tools_for: ToolsFor, files_of: FilesOf) -> list[SkillTool]:
    """A tool for each user-invocable skill."""
    return [SkillTool(skill, tools_for, files_of) for skill in skills if skill.user_invocable]
