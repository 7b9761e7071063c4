"""The skill model: one SKILL.md's front matter and body, validated.

The fields follow the Agent Skills format (``name``, ``description``, ``license``,
``compatibility``, ``metadata``, ``allowed-tools``) and the fields Claude Code adds
(``argument-hint``, ``user-invocable``, ``disallowed-tools``), plus toolsift's own
``version`` and ``variables``. Front-matter keys are hyphenated; the model's
attributes use underscores and accept either spelling on construction.

A skill does not decide what the model sees: it carries its patterns
(``allowed_tools``, ``disallowed_tools``) and the registry's ``TurnScope`` applies
them. Here ``allowed-tools`` RESTRICTS the turn to the tools it names, where
Claude Code only pre-approves them. Claude Code's MCP names (``mcp__S__t``) are
read as toolsift's (``S__t``); its own tools and rules (``Read``,
``Bash(git add:*)``) are kept as written and match no tool.

The model checks what a skill needs to work (a valid id, a description, valid
patterns). The Agent Skills length limits and the name-equals-folder rule are
not refused here: the parser loads such skills with a warning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, final

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationInfo, field_validator, model_validator

from .._globs import compile_patterns
from ._claude_tools import foreign_reason, from_claude_code
from ._render import render_skill
from ._variables import SkillVariable, normalise_variables, scalar_to_str
from ._warning import SkillWarning

if TYPE_CHECKING:
    from ._sandbox import TemplateSandbox

__all__ = ["Skill", "is_skill_name", "split_tool_list"]

# Agent Skills: lowercase letters, digits and single hyphens, no hyphen at either end.
_SKILL_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_MAX_NAME = 64
# One entry of a tool-list string: a run of characters that are not separators,
# where a parenthesised group (Claude Code's ``Bash(git add:*)``) may hold spaces and commas.
_TOOL_TOKEN = re.compile(r"(?:[^\s,()]+|\([^()]*\))+")
_SEPARATORS = re.compile(r"[\s,]+")


def split_tool_list(value: str) -> list[str]:
    """Split an ``allowed-tools`` string the way Claude Code and Agent Skills write it.

    Entries are separated by commas, whitespace or both: ``"read_file, write_file"``
    and ``"read_file write_file"`` give the same list. Parentheses group, so
    ``"Bash(git add:*), Read"`` is two entries.

    Raises:
        ValueError: When parentheses do not balance.
    """
    # Whatever the tokens leave besides separators can only be a stray parenthesis.
    if _SEPARATORS.sub("", _TOOL_TOKEN.sub("", value)):
        raise ValueError(f"cannot split {value!r} into tool patterns: unbalanced parentheses")
    return _TOOL_TOKEN.findall(value)


def is_skill_name(name: object) -> bool:
    """Whether ``name`` is a valid skill id (Agent Skills: 1-64 lowercase letters, digits, single hyphens)."""
    return isinstance(name, str) and len(name) <= _MAX_NAME and _SKILL_NAME.fullmatch(name) is not None


def _tool_patterns(value: object, field: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        items: list[Any] = split_tool_list(value)
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        raise ValueError(
            f"expected a list of tool patterns or a comma/space separated string, got {type(value).__name__}"
        )
    # compile_patterns validates every entry (raising InvalidPattern) and warms the
    # cache the registry's TurnScope uses for the same tuple.
    entries = [from_claude_code(item) if isinstance(item, str) else item for item in items]
    return compile_patterns(entries, where=f"field {field!r}").patterns


@final
class Skill(BaseModel):
    """A parsed, validated SKILL.md.

    Build one with :func:`parse_skill` / :func:`parse_skill_text`, or directly
    (``Skill(name=..., description=..., body=...)``), in which case a templated
    body is first compiled when it renders. Instances are immutable.

    Attributes:
        name: The skill's id, what ``/use`` takes: the ``name`` written, or the
            folder's name when that is not a valid id (or not written).
        display_name: The ``name`` as written when it is a display name rather
            than an id (``Pair Programming``); None otherwise.
        description: What the skill does and when to use it.
        version: Free-form version text.
        variables: Declared template variables, by name, in declaration order.
        templating: ``"jinja"`` when the body is a template, ``"none"`` when it is
            plain text; when not written, ``"jinja"`` exactly if ``variables``
            declares any.
        allowed_tools: Globs restricting the turn's tools (empty: no extra limit).
            A pattern naming a server literally (``claude-flow__memory_*``) also
            surfaces that internal server's matching tools. Claude Code MCP
            names are stored translated; see :attr:`foreign_tools` for the
            entries kept as written.
        disallowed_tools: Globs removed from the turn even when allowed elsewhere.
        user_invocable: Whether ``/use`` and ``/skills`` offer it.
        argument_hint: What ``/use <name>`` expects, shown in usage messages.
        license: Agent Skills ``license``.
        compatibility: Agent Skills ``compatibility``.
        metadata: Agent Skills ``metadata``, kept as written.
        extra: Every other front-matter field, kept as written.
        body: The markdown body (a Jinja2 template when ``templating`` is ``"jinja"``).
        path: The SKILL.md file, when the skill came from one.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", validate_by_name=True, validate_by_alias=True)

    name: str
    display_name: str | None = None
    description: str = Field(min_length=1)
    version: str | None = None
    variables: Mapping[str, SkillVariable] = Field(default_factory=dict)
    templating: Literal["jinja", "none"] = "none"
    allowed_tools: tuple[str, ...] = Field(default=(), alias="allowed-tools")
    disallowed_tools: tuple[str, ...] = Field(default=(), alias="disallowed-tools")
    user_invocable: bool = Field(default=True, alias="user-invocable")
    argument_hint: str | None = Field(default=None, alias="argument-hint")
    license: str | None = None
    compatibility: str | None = None
    metadata: Mapping[str, Any] = Field(default_factory=dict)
    extra: Mapping[str, Any] = Field(default_factory=dict)
    body: str = Field(default="", repr=False)
    path: Path | None = None
    # How the file was read: not content, so neither fields nor front-matter keys.
    _warnings: tuple[SkillWarning, ...] = PrivateAttr(default=())
    _sandbox: TemplateSandbox | None = PrivateAttr(default=None)

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not is_skill_name(name):
            raise ValueError(
                f"{name!r} is not a valid skill name: use 1-{_MAX_NAME} lowercase letters, digits and "
                "single hyphens, not starting or ending with a hyphen"
            )
        return name

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: object) -> object:
        return scalar_to_str(value)

    @field_validator("argument_hint", mode="before")
    @classmethod
    def _hint_as_text(cls, value: object) -> object:
        # Claude Code writes `argument-hint: [message]` unquoted, which YAML reads as a list.
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return f"[{', '.join(value)}]"
        return value

    @field_validator("variables", mode="before")
    @classmethod
    def _normalise_variables(cls, value: object) -> object:
        return normalise_variables(value)

    @model_validator(mode="before")
    @classmethod
    def _templated_when_variables(cls, data: Any) -> Any:
        # Opt-in: a body is a template only when the skill asks for one, so plain
        # skills full of ``{{ }}`` (Actions, Helm, Handlebars) load as written.
        if isinstance(data, Mapping) and data.get("templating") is None:
            return {**data, "templating": "jinja" if data.get("variables") else "none"}
        return data

    @field_validator("templating")
    @classmethod
    def _variables_need_a_template(cls, value: str, info: ValidationInfo) -> str:
        if value == "none" and info.data.get("variables"):
            raise ValueError(
                "a skill with 'variables' has a templated body; remove 'templating: none' or the variables"
            )
        return value

    @field_validator("allowed_tools", mode="before")
    @classmethod
    def _allowed(cls, value: object) -> tuple[str, ...]:
        return _tool_patterns(value, "allowed-tools")

    @field_validator("disallowed_tools", mode="before")
    @classmethod
    def _disallowed(cls, value: object) -> tuple[str, ...]:
        return _tool_patterns(value, "disallowed-tools")

    @property
    def templated(self) -> bool:
        """Whether the body is a Jinja2 template (else it is used as written)."""
        return self.templating == "jinja"

    @property
    def warnings(self) -> tuple[SkillWarning, ...]:
        """What the parser worked around to load this skill (empty when built in code)."""
        return self._warnings

    @property
    def foreign_tools(self) -> tuple[str, ...]:
        """Entries of ``allowed-tools`` and ``disallowed-tools`` that name no toolsift tool.

        Claude Code's own tools and permission rules (``Read``, ``Bash(git add:*)``),
        kept as written; they match no toolsift tool.
        """
        entries = dict.fromkeys((*self.allowed_tools, *self.disallowed_tools))
        return tuple(entry for entry in entries if foreign_reason(entry) is not None)

    def _note_loading(self, warnings: tuple[SkillWarning, ...], sandbox: TemplateSandbox | None) -> None:
        """Record how the parser read this (new, not yet shared) skill."""
        self._warnings = warnings
        self._sandbox = sandbox

    async def render(
        self, variables: Mapping[str, object] | None = None, *, sandbox: TemplateSandbox | None = None
    ) -> str:
        """Render the body with ``variables`` (from ``/use`` text: :func:`bind_arguments`) without blocking.

        A plain body comes back as written, followed by ``ARGUMENTS: <text>`` when
        ``arguments`` is given; a templated one renders in a sandbox, variables not
        given taking their default. Raises ``SkillRenderError`` naming what failed.

        Without ``sandbox``, a templated body renders in the sandbox the skill was
        loaded with (a loader's, whose limits come from the config), else the
        shared default.
        """
        return await render_skill(self, variables, sandbox=sandbox or self._sandbox)

    def usage(self) -> str:
        """How to invoke the skill: ``/use <name> <argument-hint>``.

        Without an ``argument-hint`` the hint is built from the variables:
        ``<topic>`` for one, ``version=<version> [audience=<audience>]`` for several.
        """
        hint = self.argument_hint
        if hint is None:
            parts = []
            for spec in self.variables.values():
                part = f"<{spec.name}>" if len(self.variables) == 1 else f"{spec.name}=<{spec.name}>"
                parts.append(part if spec.required else f"[{part}]")
            hint = " ".join(parts)
        return f"/use {self.name} {hint}".rstrip()
