"""What the index knows of one tool or one skill: its terms, plain text and one-line summary."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..registry import ToolSpec, split_name
from ._tokens import weighted

__all__ = ["IndexedSkill", "SearchDocument", "one_line", "skill_document", "tool_document"]

DocumentKind = Literal["tool", "skill"]

SUMMARY_LIMIT = 160
# Field weights (how many times a field's terms are repeated). A tool is mostly
# found by what it is called; its description says it in more, vaguer, words.
NAME_WEIGHT = 3
TITLE_WEIGHT = 1
SERVER_WEIGHT = 1
DESCRIPTION_WEIGHT = 1
PARAMETER_WEIGHT = 1
SKILL_NAME_WEIGHT = 3
SKILL_DESCRIPTION_WEIGHT = 2
SKILL_BODY_WEIGHT = 1

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


class IndexedSkill(Protocol):
    """What search reads of a skill (``Skill`` and ``McpPromptSkill`` both fit)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def body(self) -> str: ...
    @property
    def allowed_tools(self) -> tuple[str, ...]: ...
    @property
    def disallowed_tools(self) -> tuple[str, ...]: ...
    def usage(self) -> str: ...


@dataclass(frozen=True, eq=False)
class SearchDocument:
    """One searchable item.

    Attributes:
        kind: ``tool`` or ``skill``.
        name: The canonical tool name or the skill name.
        server: The tool's server, or the server of a prompt skill (None for builtin
            tools and SKILL.md skills).
        summary: The first sentence of the description, at most 160 characters.
        terms: Index terms, field weights applied.
        text: Plain text for embedding backends (name, description, parameters).
    """

    kind: DocumentKind
    name: str
    server: str | None
    summary: str
    terms: tuple[str, ...]
    text: str


def one_line(description: str, limit: int = SUMMARY_LIMIT) -> str:
    """The first sentence of the first paragraph of ``description``, cut to ``limit`` characters."""
    paragraph = " ".join(description.strip().split("\n\n", 1)[0].split())
    sentence = _SENTENCE_END.split(paragraph, 1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "\u2026"


def _parameter_names(schema: Mapping[str, Any]) -> list[str]:
    properties = schema.get("properties")
    return [str(key) for key in properties] if isinstance(properties, Mapping) else []


def tool_document(spec: ToolSpec) -> SearchDocument:
    """The document of one tool: name, server, title, description and parameter names."""
    namespace, bare = split_name(spec.name)
    server = spec.server or namespace
    parameters = " ".join(_parameter_names(spec.input_schema))
    title = spec.title or ""
    terms = weighted([
        (bare, NAME_WEIGHT),
        (server or "", SERVER_WEIGHT),
        (title, TITLE_WEIGHT),
        (spec.description, DESCRIPTION_WEIGHT),
        (parameters, PARAMETER_WEIGHT),
    ])
    text = f"{bare.replace('_', ' ')}. {title}. {spec.description} Parameters: {parameters}"
    return SearchDocument("tool", spec.name, server, one_line(spec.description), tuple(terms), text)


def skill_document(skill: IndexedSkill, *, server: str | None = None) -> SearchDocument:
    """The document of one skill: name, description and body; ``server`` for a server's prompt."""
    terms = weighted([
        (skill.name, SKILL_NAME_WEIGHT),
        (skill.description, SKILL_DESCRIPTION_WEIGHT),
        (skill.body, SKILL_BODY_WEIGHT),
    ])
    text = f"{skill.name.replace('-', ' ')}. {skill.description} {skill.body}"
    return SearchDocument("skill", skill.name, server, one_line(skill.description), tuple(terms), text)
