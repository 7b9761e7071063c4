"""Which client wrote a config file: first by where it sits, then by the keys it holds."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._dialect import DIALECTS, Dialect

__all__ = ["detect_dialect", "project_folder"]

# (folder, file name) -> dialect: the places each client keeps its file.
_BY_PLACE = {
    (".vscode", "mcp.json"): "vscode",
    (".cursor", "mcp.json"): "cursor",
    (".gemini", "settings.json"): "gemini",
    ("windsurf", "mcp_config.json"): "windsurf",  # ~/.codeium/windsurf/mcp_config.json
}
_BY_NAME = {
    "cline_mcp_settings.json": "cline",
    "claude_desktop_config.json": "claude",
    ".mcp.json": "claude",
}
# Folders a client keeps inside a project; the project is the folder that holds them.
_CLIENT_FOLDERS = frozenset({".vscode", ".cursor", ".gemini", ".claude"})
_STREAMABLE = frozenset({"streamableHttp", "streamable-http"})


def project_folder(path: Path) -> Path:
    """The project a config file belongs to: the folder holding ``.vscode/`` (etc.), else the file's folder."""
    folder = path.parent
    return folder.parent if folder.name in _CLIENT_FOLDERS else folder


def _by_keys(data: Mapping[str, Any]) -> str:
    if "tools" in data:
        return "toolsift"
    if isinstance(data.get("servers"), dict) or "inputs" in data:
        return "vscode"
    servers = data.get("mcpServers", data.get("mcp_servers"))
    if not isinstance(servers, dict):
        return "toolsift"
    entries = [entry for entry in servers.values() if isinstance(entry, dict)]

    def any_entry(*keys: str) -> bool:
        return any(key in entry for entry in entries for key in keys)

    if any_entry("serverUrl", "disabledTools"):
        return "windsurf"
    if any_entry("httpUrl") or any(isinstance(entry.get("trust"), bool) for entry in entries):
        return "gemini"
    if any_entry("autoApprove", "alwaysAllow") or any(entry.get("type") == "streamableHttp" for entry in entries):
        return "cline"
    if any(entry.get("transport") in _STREAMABLE or isinstance(entry.get("auth"), str) for entry in entries):
        return "fastmcp"
    if any_entry("envFile") or any("${env:" in str(entry) or "${workspaceFolder}" in str(entry) for entry in entries):
        return "cursor"
    return "claude"


def detect_dialect(path: Path | None, data: Mapping[str, Any]) -> Dialect:
    """The dialect of a decoded config file.

    The file's place decides when it is one a client owns (``.vscode/mcp.json``,
    ``.cursor/mcp.json``, ``.gemini/settings.json``, Windsurf's
    ``mcp_config.json``, ``cline_mcp_settings.json``,
    ``claude_desktop_config.json``, ``.mcp.json``). Otherwise the keys do: a
    ``tools`` section is toolsift's own; top-level ``servers`` or ``inputs`` is
    VS Code; a bare ``mcpServers`` file is recognised by keys only one client
    writes (``serverUrl``, ``httpUrl``, ``autoApprove``, ``auth``, ...), and is
    read as Claude Desktop / Claude Code when none is there.
    """
    if path is not None:
        name = _BY_PLACE.get((path.parent.name, path.name)) or _BY_NAME.get(path.name)
        if name is not None:
            return DIALECTS[name]
    return DIALECTS[_by_keys(data)]
