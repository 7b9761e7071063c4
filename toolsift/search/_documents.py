"""What the index knows of one tool or one skill: its fields, plain text and one-line summary."""

from __future__ import annotations

import marshal
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, Protocol

from .._names import split_name
from ..registry import ToolSpec
from ._tokens import identifiers, name_key, terms_of

__all__ = [
    "FIELDS",
    "IndexedSkill",
    "SearchDocument",
    "cut",
    "embedding_text",
    "local_name",
    "mentions",
    "one_line",
    "quoted",
    "server_text",
    "skill_document",
    "tool_document",
]

DocumentKind = Literal["tool", "skill"]
#: The fields a document is indexed by; the ranking weights each separately (see ``_fielded``).
FIELDS = ("name", "summary", "description", "parameters", "server")

SUMMARY_LIMIT = 160
ECHO_LIMIT = 80
#: The version of :func:`embedding_text`'s form: embeddings cached under another are dropped, never mixed.
TEXT_FORM = 2
EMBED_SUMMARY = 100
EMBED_PARAMETERS = 8
EMBED_SERVER = 200

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
        fields: Index terms by field (see :data:`FIELDS`).
        text: Plain text for embedding backends (see :func:`embedding_text`).
        identity: Equal for the same tool offered by several servers (same name on
            its server, same input schema); search shows such tools as one hit.
        local_name: The tool's name on its server (``memory_store`` for
            ``claude-flow__memory_store``); the skill name for a skill.
        context: Plain text of where the tool is, for embedding backends: its server's
            name and the head of what the server says of itself (see :func:`server_text`);
            empty for a document of no server.
    """

    kind: DocumentKind
    name: str
    server: str | None
    summary: str
    fields: Mapping[str, tuple[str, ...]]
    text: str
    identity: str
    local_name: str
    context: str = ""


@lru_cache(maxsize=16_384)
def one_line(description: str, limit: int = SUMMARY_LIMIT) -> str:
    """The first sentence of the first paragraph of ``description``, cut to ``limit`` characters."""
    paragraph = " ".join(description.strip().split("\n\n", 1)[0].split())
    sentence = _SENTENCE_END.split(paragraph, 1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "\u2026"


def cut(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, as a result echoes what the caller sent (the caller has it already)."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def quoted(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` as a message echoes it: ``repr``, cut to ``limit`` characters."""
    return repr(cut(text, limit))


def _parameters(schema: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The top-level parameters' names, and their descriptions (what a tool without one of its own still says)."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return [], []
    described = [
        str(value["description"])
        for value in properties.values()
        if isinstance(value, Mapping) and isinstance(value.get("description"), str)
    ]
    return [str(key) for key in properties], described


@lru_cache(maxsize=16_384)
def mentions(text: str) -> frozenset[str]:
    """:func:`name_key` of every word of ``text`` written as an identifier (a tool name it may mention)."""
    return frozenset(name_key(word) for word in identifiers(text))


@lru_cache(maxsize=16_384)
def _strip(text: str, keys: frozenset[str]) -> str:
    for word in set(identifiers(text)):
        if name_key(word) in keys:
            text = re.sub(rf"(?<![\w-]){re.escape(word)}(?![\w-])", " ", text)
    return text


def without_mentions(text: str, siblings: Collection[str], own: str) -> str:
    """``text`` without the identifiers that name other tools of the same server.

    "Read back a value stored via memory_store" describes ``memory_retrieve``;
    indexed as written, it would rank ``memory_retrieve`` for "memory store".
    ``siblings`` holds the other tools' :func:`name_key`; ``own`` is this tool's.
    """
    named = (mentions(text) & frozenset(siblings)) - {own}
    return _strip(text, named) if named else text


def local_name(spec: ToolSpec) -> str:
    """The tool's name on its own server (its canonical name for a builtin tool)."""
    return spec.remote_name or split_name(spec.name)[1]


def tool_identity(bare: str, schema: Mapping[str, Any]) -> str:
    """The same tool on several servers has the same identity: its name there and its input schema.

    Compared within one process only, so Python's own hash of the schema's
    ``marshal`` bytes serves: a sixth of the cost of ``repr`` or JSON, which
    matters at 10,000 tools. Key order counts (servers send their schemas the same way).
    """
    try:
        data = marshal.dumps(dict(schema))
    except ValueError:  # something that is not JSON data; repr still tells schemas apart
        data = repr(schema).encode()
    return f"tool:{bare}:{hash(data):x}"


def embedding_text(name: str, title: str, description: str, parameters: Sequence[str]) -> str:
    """What a tool is embedded by: its name, title, the head of its first sentence and its first parameters.

    An embedding costs in proportion to the text's word pieces: claude-flow's tools
    average 35 in this form, 104 with their whole descriptions. The rest of a
    description is BM25's to find.
    """
    head = name.replace("_", " ") + (f". {title}" if title else "")
    summary = one_line(description, EMBED_SUMMARY)
    listed = " ".join(parameters[:EMBED_PARAMETERS])
    return f"{head}. {summary}".rstrip(". ") + (f" Parameters: {listed}" if listed else "")


def server_text(server: str, about: str) -> str:
    """What a server is embedded by: its name in words and the head of the first sentence it says of itself.

    One text per server, whatever its number of tools: a task names the service
    ("on GitHub", "in my Notion workspace") more often than the tool.
    """
    words = " ".join(server.replace("_", " ").replace("-", " ").split())
    summary = one_line(about, EMBED_SERVER)
    return f"{words}. {summary}" if summary else words


@lru_cache(maxsize=16_384)
def _tool_fields(name: str, title: str, description: str, parameters: str) -> dict[str, tuple[str, ...]]:
    # The same tool on thirty servers is read once (callers copy the dict).
    return {
        "name": terms_of(name),
        "summary": terms_of(f"{title} {one_line(description)}"),
        "description": terms_of(description),
        "parameters": terms_of(parameters),
    }


def tool_document(spec: ToolSpec, *, siblings: Collection[str] = (), about: str = "") -> SearchDocument:
    """The document of one tool: name, title and summary, description, parameters, and its server.

    Args:
        spec: The tool.
        siblings: :func:`name_key` of every tool of the same server; mentions of
            the others in the description are not indexed (see :func:`without_mentions`).
        about: What the tool's server says of itself (its description and
            instructions), indexed in the ``server`` field with the server's name.
    """
    remote = local_name(spec)
    server = spec.server or split_name(spec.name)[0]
    names, described = _parameters(spec.input_schema)
    parameters = " ".join(names)
    description = without_mentions(spec.description, siblings, name_key(remote))
    summary = one_line(spec.description)
    fields = {
        **_tool_fields(remote, spec.title or "", description, " ".join((parameters, *described))),
        "server": terms_of(f"{server or ''} {about}"),
    }
    text = embedding_text(remote, spec.title or "", spec.description, names)
    context = server_text(server, about) if server else ""
    identity = tool_identity(remote, spec.input_schema)
    return SearchDocument("tool", spec.name, server, summary, fields, text, identity, remote, context)


def skill_document(skill: IndexedSkill, *, server: str | None = None) -> SearchDocument:
    """The document of one skill: name, description and body; ``server`` for a server's prompt."""
    own = split_name(skill.name)[1] if server is not None else skill.name  # ``general__review`` -> ``review``
    fields = {
        "name": terms_of(own),
        "summary": terms_of(skill.description),
        "description": terms_of(skill.body),
        "parameters": (),
        "server": terms_of(server or ""),
    }
    text = f"{skill.name.replace('-', ' ')}. {skill.description} {skill.body}"
    return SearchDocument(
        "skill",
        skill.name,
        server,
        one_line(skill.description),
        fields,
        text,
        f"skill:{server or ''}:{skill.name}",
        own,
    )
