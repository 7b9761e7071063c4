"""MCP prompts as skills: ``/use general__review <code>`` renders the server's prompt.

A prompt listed by a connected server becomes a skill named ``server__prompt``
(the server's tool namespace, then the prompt's name). Its arguments become the
skill's variables, so ``/use`` binds argument text exactly as for a SKILL.md
skill (one argument takes the whole text, several take ``name=value`` pairs).
Rendering asks the server (``prompts/get``) with the bound values; the messages
it returns become the skill's instructions.

A prompt skill grants no tools (a prompt has no ``allowed-tools``), so using one
leaves the turn's tool scope as it was.
"""

from __future__ import annotations

import keyword
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, final

import mcp.types as types

from .._exceptions import SkillRenderError
from .._fence import neutralise_markers
from ..config import ServerConfig
from ..mcp_sessions._internal import ServerCatalog
from ..skills._internal import SkillVariable

__all__ = ["McpPromptSkill", "PromptSession", "prompt_skills"]

logger = logging.getLogger("toolsift.search")

# A name ``/use`` can take as one word: no spaces, nothing a shell-like split would break.
_PROMPT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]+")
# Names SkillVariable refuses: the always-present raw text, Jinja literals, Python keywords.
_RESERVED = frozenset({"arguments", "true", "false", "none"})


class PromptSession(Protocol):
    """What a prompt skill needs of an MCP session (``McpSession`` fits)."""

    @property
    def config(self) -> ServerConfig: ...
    @property
    def name(self) -> str: ...
    @property
    def catalog(self) -> ServerCatalog: ...

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> types.GetPromptResult:
        """Render one prompt on the server."""
        ...


def _variable_name(argument: str, taken: set[str]) -> str:
    """A Jinja-safe variable name for a prompt argument (``file-path`` -> ``file_path``)."""
    name = _NOT_IDENTIFIER.sub("_", argument).strip("_") or "value"
    if not name[0].isalpha() or name.lower() in _RESERVED or keyword.iskeyword(name):
        name = f"arg_{name}"
    candidate, suffix = name, 2
    while candidate in taken:
        candidate, suffix = f"{name}_{suffix}", suffix + 1
    taken.add(candidate)
    return candidate


def _content_text(content: types.ContentBlock) -> str:
    if isinstance(content, types.TextContent):
        return content.text
    if isinstance(content, types.EmbeddedResource) and isinstance(content.resource, types.TextResourceContents):
        return content.resource.text
    if isinstance(content, types.ResourceLink):
        return f"[resource {content.uri}]"
    mime = getattr(content, "mime_type", None) or getattr(getattr(content, "resource", None), "mime_type", None)
    return f"[{content.type} content omitted{f': {mime}' if mime else ''}]"


def _messages_text(messages: list[types.PromptMessage]) -> str:
    """The prompt's messages as instructions; non-user messages are labelled with their role."""
    parts = []
    for message in messages:
        text = _content_text(message.content)
        parts.append(text if message.role == "user" else f"[{message.role}]\n{text}")
    return "\n\n".join(parts)


@final
@dataclass(frozen=True, eq=False)
class McpPromptSkill:
    """A server's prompt that ``/use`` activates like a SKILL.md skill.

    It has what the conversation helper reads of a skill (``name``,
    ``description``, ``variables``, ``allowed_tools``, ``disallowed_tools``,
    ``user_invocable``, ``usage()``) and an asynchronous :meth:`render`.

    Attributes:
        name: ``namespace__prompt``.
        description: The prompt's description (or a stand-in naming it).
        server: The MCP server's name.
        prompt: The prompt as the server listed it.
        variables: One variable per prompt argument.
        argument_names: The prompt argument behind each variable.
        body: Text the search index reads (argument names and descriptions).
    """

    name: str
    description: str
    server: str
    prompt: types.Prompt
    session: PromptSession = field(repr=False)
    variables: Mapping[str, SkillVariable] = field(default_factory=dict)
    argument_names: Mapping[str, str] = field(default_factory=dict)
    body: str = field(default="", repr=False)
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    user_invocable: bool = True
    argument_hint: str | None = None
    path: Path | None = None

    def usage(self) -> str:
        """``/use <name> <argument>`` for one argument, ``name=<name>`` pairs for several."""
        parts = []
        for spec in self.variables.values():
            part = f"<{spec.name}>" if len(self.variables) == 1 else f"{spec.name}=<{spec.name}>"
            parts.append(part if spec.required else f"[{part}]")
        return " ".join([f"/use {self.name}", *parts]).rstrip()

    async def render(self, variables: Mapping[str, object] | None = None) -> str:
        """Ask the server for the prompt with ``variables`` bound to its arguments.

        Optional arguments left empty are not sent, so the server applies its
        own defaults. Text that imitates toolsift's untrusted-result markers is
        neutralised. If the caller is cancelled, the request is cancelled too.

        Raises:
            SkillRenderError: A required value is missing, or the server is not
                ready or refused (unknown prompt, bad arguments).
        """
        given = dict(variables or {})
        arguments: dict[str, str] = {}
        for variable, spec in self.variables.items():
            value = str(given.get(variable, "") or "")
            if not value and spec.required:
                raise SkillRenderError(self.name, f"missing required variable {variable!r}")
            if value:
                arguments[self.argument_names[variable]] = value
        try:
            result = await self.session.get_prompt(self.prompt.name, arguments)
        except Exception as exc:
            raise SkillRenderError(
                self.name,
                f"MCP server {self.server!r} could not render prompt {self.prompt.name!r}: {type(exc).__name__}: {exc}",
            ) from exc
        return neutralise_markers(_messages_text(result.messages))


def _prompt_skill(session: PromptSession, prompt: types.Prompt) -> McpPromptSkill | None:
    server = session.config.name
    if not _PROMPT_NAME.fullmatch(prompt.name):
        logger.warning(
            "MCP server %r: prompt %r is not offered as a skill: its name must match %s",
            server,
            prompt.name,
            _PROMPT_NAME.pattern,
        )
        return None
    taken: set[str] = set()
    variables: dict[str, SkillVariable] = {}
    argument_names: dict[str, str] = {}
    lines = []
    for argument in prompt.arguments or []:
        variable = _variable_name(argument.name, taken)
        required = bool(argument.required)
        variables[variable] = SkillVariable(name=variable, description=argument.description or "", required=required)
        argument_names[variable] = argument.name
        lines.append(f"{argument.name}: {argument.description or ''}")
    description = prompt.description or prompt.title or f"Prompt {prompt.name!r} of MCP server {server!r}."
    return McpPromptSkill(
        name=f"{session.config.namespace}__{prompt.name}",
        description=description,
        server=server,
        prompt=prompt,
        session=session,
        variables=variables,
        argument_names=argument_names,
        body="\n".join(lines),
    )


def prompt_skills(session: PromptSession) -> list[McpPromptSkill]:
    """One skill per prompt the session's server listed (names ``/use`` cannot take are skipped)."""
    return [skill for prompt in session.catalog.prompts if (skill := _prompt_skill(session, prompt)) is not None]
