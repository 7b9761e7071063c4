"""MCP servers that come with a skill (a ``.mcp.json`` beside its SKILL.md) or with a Claude Code plugin.

A bundled server file has the shape Claude Code and Claude Desktop write,
``{"mcpServers": {"notes": {"command": ..., "args": [...]}}}``, or the bare map
``{"notes": {...}}`` that Claude Code plugins write; it is read by the same
loader as any other client's file (``toolsift.config``), so every key means
what it means in a project's ``.mcp.json``. ``${CLAUDE_PLUGIN_ROOT}`` stands for
the real folder the file belongs to (the plugin's root, or the skill's folder),
whatever the environment says: a plugin's paths are its own.

Each server comes as a :class:`Declared`: with the file that declares it and
the root its entry uses, which is what the trust rule judges it on (``_reach``).

Such a server belongs to its skill: it is internal (its tools surface only
through the skill's ``allowed-tools``), never pinned, never found by a tool
search, and it starts when the skill is used, not at start.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, final

from .._exceptions import ConfigError, ToolsiftError
from ..config import ServerConfig, parse_config

__all__ = ["PLUGIN_ROOT", "SERVER_FILE", "Declared", "read_server_file", "read_server_map"]

SERVER_FILE = ".mcp.json"
PLUGIN_ROOT = "${CLAUDE_PLUGIN_ROOT}"
# What makes a server the skill's own, whatever its entry says.
_OWNED = {"internal_only": True, "searchable": False, "always_load": False, "lazy": False}


@final
@dataclass(frozen=True)
class Declared:
    """One server as a skill's or a plugin's file declares it.

    Attributes:
        server: The server, skill-owned (internal, unsearchable).
        file: The file that declares it, as it was found: what a trust record is kept under.
        root: The real folder ``${CLAUDE_PLUGIN_ROOT}`` stands for in its entry; None when the entry does not use it.
    """

    server: ServerConfig
    file: Path
    root: Path | None = None


def read_server_file(path: Path, *, root: Path, prefix: str = "") -> dict[str, Declared]:
    """The servers ``path`` declares, as skill-owned servers named ``prefix + name``.

    Args:
        path: A ``.mcp.json`` file.
        root: What ``${CLAUDE_PLUGIN_ROOT}`` stands for: a real folder (links resolved).
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
    return _owned(parse_config(_with_root(text, root), path), path, prefix, root)


def read_server_map(servers: Mapping[str, Any], *, path: Path, root: Path, prefix: str = "") -> dict[str, Declared]:
    """The servers of an inline ``mcpServers`` object (a plugin's ``plugin.json``), as :func:`read_server_file`.

    Raises:
        ConfigError: An entry has a problem (naming ``path``).
    """
    text = json.dumps({"mcpServers": servers}, indent=2)
    return _owned(parse_config(_with_root(text, root), path), path, prefix, root)


def _in_json(root: Path) -> str:
    """``root`` as it reads inside a JSON string (without the quotes)."""
    return json.dumps(str(root), ensure_ascii=False)[1:-1]


def _with_root(text: str, root: Path) -> str:
    return text.replace(PLUGIN_ROOT, _in_json(root))


def _uses(server: ServerConfig, root: Path) -> bool:
    """Whether any setting of ``server`` holds ``root``: ``${CLAUDE_PLUGIN_ROOT}`` was written there."""
    return _in_json(root) in json.dumps(server.model_dump(mode="json"), ensure_ascii=False)


def _owned(config: Any, path: Path, prefix: str, root: Path) -> dict[str, Declared]:
    owned: dict[str, Declared] = {}
    for name, server in config.servers.items():
        if not server.enabled:
            continue
        try:
            server = server.model_copy(update=_OWNED).with_name(prefix + name)
        except ToolsiftError as exc:
            raise ConfigError(f"server {name!r}: {exc}", path=path, field=f"mcpServers.{name}") from None
        owned[prefix + name] = Declared(server, path, root if _uses(server, root) else None)
    return owned
