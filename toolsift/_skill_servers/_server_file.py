"""MCP servers that come with a skill (a ``.mcp.json`` beside its SKILL.md) or with a Claude Code plugin.

A bundled server file has the shape Claude Code and Claude Desktop write,
``{"mcpServers": {"notes": {"command": ..., "args": [...]}}}``, or the bare map
``{"notes": {...}}`` that Claude Code plugins write; it is read by the same
loader as any other client's file (``toolsift.config``), so every key means
what it means in a project's ``.mcp.json``. ``${CLAUDE_PLUGIN_ROOT}`` stands for
the folder the file belongs to (the plugin's root, or the skill's folder),
whatever the environment says: a plugin's paths are its own.

Such a server belongs to its skill: it is internal (its tools surface only
through the skill's ``allowed-tools``), never pinned, never found by a tool
search, and it starts when the skill is used, not at start.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._exceptions import ConfigError, ToolsiftError
from ..config import ServerConfig, parse_config

__all__ = ["PLUGIN_ROOT", "SERVER_FILE", "read_server_file", "read_server_map"]

SERVER_FILE = ".mcp.json"
PLUGIN_ROOT = "${CLAUDE_PLUGIN_ROOT}"
# What makes a server the skill's own, whatever its entry says.
_OWNED = {"internal_only": True, "searchable": False, "always_load": False, "lazy": False}


def read_server_file(path: Path, *, root: Path, prefix: str = "") -> dict[str, ServerConfig]:
    """The servers ``path`` declares, as skill-owned servers named ``prefix + name``.

    Args:
        path: A ``.mcp.json`` file.
        root: What ``${CLAUDE_PLUGIN_ROOT}`` stands for.
        prefix: Put before each server's name (a plugin's ``plugin_<name>_``).

    Raises:
        ConfigError: The file cannot be read, or has a problem (naming the file, line and field).
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read the skill's server file: {exc.strerror or exc}", path=path) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"the skill's server file is not UTF-8 text ({exc.reason})", path=path) from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"the skill's server file is not JSON: {exc}", path=path) from None
    if not isinstance(data, dict):
        raise ConfigError('expected an object: {"mcpServers": {"<name>": {"command": ...}}}', path=path)
    if "mcpServers" not in data:
        # Claude Code plugins write the bare map; wrapping it on the first line keeps every line number.
        text = '{"mcpServers": ' + text + "}"
    return _owned(parse_config(_with_root(text, root), path), path, prefix)


def read_server_map(servers: Mapping[str, Any], *, path: Path, root: Path, prefix: str = "") -> dict[str, ServerConfig]:
    """The servers of an inline ``mcpServers`` object (a plugin's ``plugin.json``), as :func:`read_server_file`.

    Raises:
        ConfigError: An entry has a problem (naming ``path``).
    """
    text = json.dumps({"mcpServers": servers}, indent=2)
    return _owned(parse_config(_with_root(text, root), path), path, prefix)


def _with_root(text: str, root: Path) -> str:
    # The path goes into JSON strings: encode it as one (without the quotes).
    return text.replace(PLUGIN_ROOT, json.dumps(str(root))[1:-1])


def _owned(config: Any, path: Path, prefix: str) -> dict[str, ServerConfig]:
    owned: dict[str, ServerConfig] = {}
    for name, server in config.servers.items():
        if not server.enabled:
            continue
        try:
            owned[prefix + name] = server.model_copy(update=_OWNED).with_name(prefix + name)
        except ToolsiftError as exc:
            raise ConfigError(f"server {name!r}: {exc}", path=path, field=f"mcpServers.{name}") from None
    return owned
