"""MCP resources for the model: two router tools over every session, and resource context.

Two tools for all servers, instead of two per server:

- ``ListMcpResources {server?, max?}`` lists resources and resource templates
  from the sessions' catalogs (kept current by ``resources/list_changed``);
- ``ReadMcpResource {server, uri, max_bytes?}`` reads one resource.

Both are read-only and bounded: at most ``max_entries`` listed (200 by default)
and ``max_bytes`` read (256 KiB by default), a call may ask for less, and a
``truncated`` flag says when something was left out. Text is cut on a UTF-8
character boundary; binary contents come as base64 with ``blob_length``, their
decoded size. A server that fails becomes an entry of ``errors``; the call
still returns what the others gave. Results from ``trust: untrusted`` servers
are fenced like tool results.

:func:`resource_context` reads the resources of servers configured with
``resources: true`` (narrowed by ``resourceFilter`` globs over URIs) into one
block of text for the turn's instructions, fenced as untrusted.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from collections.abc import Mapping, Sequence
from itertools import chain, zip_longest
from typing import Any, Protocol, final

import anyio
import mcp.types as types

from .._fence import fence
from .._globs import compile_patterns
from ..config import ServerConfig
from ..registry import Level, ToolContext, ToolResult, ToolSpec
from ._catalog import ServerCatalog
from ._untrusted import guard_result

__all__ = ["ListMcpResources", "ReadMcpResource", "ResourceSession", "resource_context"]

DEFAULT_MAX_ENTRIES = 200
DEFAULT_MAX_BYTES = 256 * 1024
DEFAULT_CONTEXT_BYTES = 64 * 1024
_DESCRIPTION_LIMIT = 200
_READ_ONLY = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


class ResourceSession(Protocol):
    """What the resource tools need of an MCP session (``McpSession`` fits)."""

    @property
    def config(self) -> ServerConfig: ...
    @property
    def catalog(self) -> ServerCatalog: ...

    async def ensure_started(self) -> None:
        """Connect a lazy session; raise ``ServerUnavailable``/``ServerDraining`` when it is not ready."""
        ...

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        """Read one resource."""
        ...


Sessions = Mapping[str, ResourceSession]


def cut_utf8(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to at most ``limit`` UTF-8 bytes without splitting a character; and whether it was cut."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, False
    end = limit
    while end > 0 and data[end] & 0xC0 == 0x80:  # a continuation byte: the character started earlier
        end -= 1
    return data[:end].decode("utf-8"), True


def _short(text: str | None) -> str | None:
    if not text:
        return None
    return text if len(text) <= _DESCRIPTION_LIMIT else text[: _DESCRIPTION_LIMIT - 1] + "\u2026"


def _compact(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in entry.items() if value is not None}


async def _ready(session: ResourceSession) -> None:
    """Connect a lazy session and wait for its first attempt; raise, in the session's words, when not ready."""
    await session.ensure_started()


def _error(server: str, exc: Exception) -> dict[str, str]:
    return {"server": server, "error": f"{type(exc).__name__}: {exc}"}


def _unknown_server(server: str, sessions: Sessions) -> ToolResult:
    known = ", ".join(sorted(sessions)) or "none are connected"
    return ToolResult.error(f"No MCP server {server!r}; servers: {known}")


def _result(payload: dict[str, Any], sessions: Sessions, servers: Sequence[str], tool: str) -> ToolResult:
    result = ToolResult.text(json.dumps(payload, ensure_ascii=False), structured=payload)
    untrusted = [s for s in servers if s in sessions and sessions[s].config.trust == "untrusted"]
    return guard_result(result, server=",".join(untrusted), tool=tool) if untrusted else result


def _spec(name: str, description: str, properties: dict[str, Any], required: list[str]) -> ToolSpec:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return ToolSpec(
        name=name,
        description=description,
        input_schema=schema,
        annotations=_READ_ONLY,
        source="builtin",
        required_level=Level.READ,
        read_only=True,
    )


@final
class ListMcpResources:
    """The ``ListMcpResources`` tool: resources and templates of every connected server.

    Args:
        sessions: Server name -> session; read on every call (an ``McpSessionGroup`` is live).
        max_entries: Most entries one call returns.

    Raises:
        ValueError: ``max_entries`` is below 1.
    """

    name = "ListMcpResources"

    def __init__(self, sessions: Sessions, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries!r}")
        self._sessions = sessions
        self._max = max_entries
        self.spec = _spec(
            self.name,
            (
                "List the resources (documents, files, data) that connected MCP servers offer, and the URI templates "
                f"of parameterised ones. At most {max_entries} entries; read one with ReadMcpResource."
            ),
            {
                "server": {"type": "string", "description": "Only this server's resources"},
                "max": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": max_entries,
                    "default": max_entries,
                    "description": "How many entries to return at most",
                },
            },
            [],
        )

    def __repr__(self) -> str:
        return f"ListMcpResources(max_entries={self._max})"

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """List every server's resources concurrently; a server that fails goes into ``errors``."""
        sessions = self._sessions
        server = args.get("server")
        if server is not None and server not in sessions:
            return _unknown_server(server, sessions)
        limit = min(int(args.get("max", self._max)), self._max)
        names = [server] if server is not None else list(sessions)
        catalogs: dict[str, ServerCatalog] = {}
        errors: list[dict[str, str]] = []

        async def collect(name: str) -> None:
            session = sessions[name]
            try:
                await _ready(session)
            except Exception as exc:
                errors.append(_error(name, exc))
                return
            catalogs[name] = session.catalog

        async with anyio.create_task_group() as group:
            for name in names:
                group.start_soon(collect, name)
        per_server: list[list[tuple[str, types.Resource | types.ResourceTemplate]]] = [
            [*((n, r) for r in catalogs[n].resources), *((n, t) for t in catalogs[n].resource_templates)]
            for n in names
            if n in catalogs
        ]
        # Round-robin over servers so that one server with thousands of resources cannot fill the cap alone.
        merged = [e for e in chain.from_iterable(zip_longest(*per_server)) if e is not None]
        chosen = merged[:limit]
        payload: dict[str, Any] = {
            "resources": [_resource_entry(n, item) for n, item in chosen if isinstance(item, types.Resource)],
            "templates": [_template_entry(n, item) for n, item in chosen if isinstance(item, types.ResourceTemplate)],
            "truncated": len(merged) > limit,
            "errors": sorted(errors, key=lambda e: e["server"]),
        }
        return _result(payload, sessions, names, self.name)


def _resource_entry(server: str, resource: types.Resource) -> dict[str, Any]:
    return _compact(
        {
            "server": server,
            "uri": str(resource.uri),
            "name": resource.name,
            "title": resource.title,
            "description": _short(resource.description),
            "mime_type": resource.mime_type,
            "size": resource.size,
        }
    )


def _template_entry(server: str, template: types.ResourceTemplate) -> dict[str, Any]:
    return _compact(
        {
            "server": server,
            "uri_template": template.uri_template,
            "name": template.name,
            "title": template.title,
            "description": _short(template.description),
            "mime_type": template.mime_type,
        }
    )


def _content_entry(
    content: types.TextResourceContents | types.BlobResourceContents, budget: int
) -> tuple[dict[str, Any], int]:
    """One content as returned to the model, and the bytes of the budget it used."""
    entry: dict[str, Any] = _compact({"uri": str(content.uri), "mime_type": content.mime_type})
    if isinstance(content, types.TextResourceContents):
        text, cut = cut_utf8(content.text, budget)
        entry["text"] = text
        used = len(text.encode("utf-8"))
    else:
        try:
            raw = base64.b64decode(content.blob, validate=True)
        except (binascii.Error, ValueError):
            entry["error"] = "the server sent a blob that is not valid base64"
            return entry, 0
        keep = raw if len(content.blob) <= budget else raw[: budget // 4 * 3]
        cut = len(keep) < len(raw)
        entry["blob"] = base64.b64encode(keep).decode("ascii")
        entry["blob_length"] = len(raw)
        used = len(entry["blob"])
    if cut:
        entry["truncated"] = True
    return entry, used


@final
class ReadMcpResource:
    """The ``ReadMcpResource`` tool: one resource of one server, size-capped.

    Args:
        sessions: Server name -> session; read on every call.
        max_bytes: Most bytes of text (UTF-8) or base64 one call returns.

    Raises:
        ValueError: ``max_bytes`` is below 1.
    """

    name = "ReadMcpResource"

    def __init__(self, sessions: Sessions, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, got {max_bytes!r}")
        self._sessions = sessions
        self._max = max_bytes
        self.spec = _spec(
            self.name,
            (
                "Read one resource of a connected MCP server by its URI (as ListMcpResources gives it, or a template "
                f"filled in). Text is cut after {max_bytes} bytes (truncated: true); binary data comes as base64."
            ),
            {
                "server": {"type": "string", "description": "The server that offers the resource"},
                "uri": {"type": "string", "minLength": 1, "description": "The resource URI"},
                "max_bytes": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": max_bytes,
                    "default": max_bytes,
                    "description": "How many bytes to return at most",
                },
            },
            ["server", "uri"],
        )

    def __repr__(self) -> str:
        return f"ReadMcpResource(max_bytes={self._max})"

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Read the resource; a failure of the server is reported in ``errors`` with ``is_error``."""
        sessions = self._sessions
        server, uri = str(args["server"]), str(args["uri"])
        if server not in sessions:
            return _unknown_server(server, sessions)
        budget = min(int(args.get("max_bytes", self._max)), self._max)
        payload: dict[str, Any] = {"server": server, "uri": uri, "contents": [], "truncated": False, "errors": []}
        try:
            await _ready(sessions[server])
            read = await sessions[server].read_resource(uri)
        except Exception as exc:
            payload["errors"].append(_error(server, exc))
            result = _result(payload, sessions, [server], self.name)
            return result.model_copy(update={"is_error": True})
        for content in read.contents:
            if budget <= 0:
                payload["truncated"] = True
                payload["omitted"] = payload.get("omitted", 0) + 1
                continue
            entry, used = _content_entry(content, budget)
            budget -= used
            payload["truncated"] = payload["truncated"] or bool(entry.get("truncated"))
            payload["contents"].append(entry)
        return _result(payload, sessions, [server], self.name)


async def resource_context(sessions: Sessions, *, max_bytes: int = DEFAULT_CONTEXT_BYTES) -> str:
    """The resources of ``resources: true`` servers, as text for the turn's instructions.

    Each server's resources (those whose URI matches ``resourceFilter``, all when
    it is empty) are read and fenced as untrusted data, unless the server is
    ``trust: trusted``. Text is cut on a character boundary once ``max_bytes``
    are used; binary resources are named, not included; a server that is not
    ready, or a resource that cannot be read, is named with the reason. Returns the empty string when no server
    asks for its resources in context. Not cached: call it once per user turn.

    Raises:
        ValueError: ``max_bytes`` is below 1.
    """
    if max_bytes < 1:
        raise ValueError(f"max_bytes must be at least 1, got {max_bytes!r}")
    budget = max_bytes
    sections: list[str] = []
    for name, session in sessions.items():
        config = session.config
        if not config.resources:
            continue
        try:
            await _ready(session)
        except Exception as exc:
            sections.append(f"## {name}\n(resources unavailable: {type(exc).__name__}: {exc})")
            continue
        wanted = compile_patterns(config.resource_filter) if config.resource_filter else None
        for resource in session.catalog.resources:
            uri = str(resource.uri)
            if wanted is not None and not wanted.matches(uri):
                continue
            if budget <= 0:
                sections.append(f"## {name}: {uri}\n(left out: the resource context is full)")
                continue
            try:
                read = await session.read_resource(uri)
            except Exception as exc:
                sections.append(f"## {name}: {uri}\n(could not be read: {type(exc).__name__}: {exc})")
                continue
            texts = []
            for content in read.contents:
                if isinstance(content, types.BlobResourceContents):
                    texts.append(f"[binary content {content.mime_type or 'of unknown type'} not included]")
                    continue
                text, cut = cut_utf8(content.text, budget)
                budget -= len(text.encode("utf-8"))
                texts.append(text + ("\n[cut: the resource context is full]" if cut else ""))
            body = "\n".join(texts)
            if config.trust == "untrusted":
                body = fence(body, server=name, tool=f"resource:{uri}", nonce=secrets.token_hex(4))
            sections.append(f"## {name}: {uri}\n{body}")
    if not sections:
        return ""
    return "# Resources from MCP servers\n\n" + "\n\n".join(sections)
