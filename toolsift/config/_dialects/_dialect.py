"""The MCP config files other clients write ("dialects"), and what sets each one apart.

Most keys mean the same in every client and are translated the same way
(``_translate.py``). What differs from client to client is written here, once
per client: where the servers sit, what ``timeout`` measures, which transport
a bare ``url`` means, and which ``${...}`` forms the client expands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, final

__all__ = ["DIALECTS", "Dialect", "VariableForm"]

# `${env:X}`; `${workspaceFolder}` and its kin; `${input:id}`; Claude Code's plugin
# variables with defaults; Gemini CLI's unbraced `$VAR`.
VariableForm = Literal["env", "workspace", "input", "claude", "dollar"]


@final
@dataclass(frozen=True)
class Dialect:
    """How one client writes its MCP servers.

    Attributes:
        name: Short name, shown by ``toolsift check`` (``vscode``).
        client: The client, for messages (``VS Code``).
        translate: False for toolsift's own files, whose keys are taken as written.
        servers_key: The top-level key the servers sit under.
        file_keys: The client's own top-level keys this layer reads (VS Code's ``inputs``).
        timeout_scale: None when ``timeout`` is toolsift's (seconds to connect);
            otherwise ``timeout`` is the client's per-request limit, read as
            ``toolTimeout`` in seconds after multiplying by this (0.001: milliseconds).
        bare_url: The transport of a ``url`` given without ``type``: ``http``,
            ``sse``, or ``by-path`` (``sse`` when the path has a ``/sse`` segment).
        variables: The ``${...}`` forms the client expands, besides ``${VAR}``.
    """

    name: str
    client: str
    translate: bool = True
    servers_key: str = "mcpServers"
    file_keys: tuple[str, ...] = ()
    timeout_scale: float | None = None
    bare_url: Literal["http", "sse", "by-path"] = "http"
    variables: frozenset[VariableForm] = frozenset()


DIALECTS: dict[str, Dialect] = {
    dialect.name: dialect
    for dialect in (
        Dialect("toolsift", "toolsift", translate=False),
        Dialect("claude", "Claude Desktop / Claude Code", variables=frozenset({"claude"})),
        Dialect(
            "vscode",
            "VS Code",
            servers_key="servers",
            file_keys=("inputs",),
            variables=frozenset({"env", "workspace", "input"}),
        ),
        # Cursor and Windsurf pick the transport of a url themselves: a /sse path is the legacy one.
        Dialect("cursor", "Cursor", bare_url="by-path", variables=frozenset({"env", "workspace"})),
        Dialect("windsurf", "Windsurf", bare_url="by-path", variables=frozenset({"env"})),
        # Cline's timeout is seconds per request; a url without a type is SSE there.
        Dialect("cline", "Cline", timeout_scale=1.0, bare_url="sse"),
        # Gemini CLI: timeout in milliseconds; `url` is SSE, `httpUrl` Streamable HTTP.
        Dialect(
            "gemini",
            "Gemini CLI",
            file_keys=("mcp",),
            timeout_scale=0.001,
            bare_url="sse",
            variables=frozenset({"dollar"}),
        ),
        # FastMCP's MCPConfig: timeout in milliseconds; the transport of a bare url follows its path.
        Dialect("fastmcp", "FastMCP", timeout_scale=0.001, bare_url="by-path"),
    )
}
