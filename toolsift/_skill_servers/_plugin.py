"""Claude Code plugins: a folder with ``.claude-plugin/plugin.json``, its ``skills/`` and its MCP servers, as one unit.

The layout is Claude Code's::

    my-plugin/
    ├── .claude-plugin/plugin.json   {"name": "my-plugin", ...}
    ├── skills/<skill>/SKILL.md
    └── .mcp.json                    {"<server>": {"command": "${CLAUDE_PLUGIN_ROOT}/...", ...}}

``plugin.json`` may name more skill folders (``"skills": "./more/"`` or a list;
they add to ``skills/``) and its servers another way (``"mcpServers"``: a path
to another file, or the servers inline). Its other components (commands,
agents, hooks, output styles, LSP servers) mean nothing to toolsift and are
ignored. A plugin's servers belong to its skills (see ``_bundled_servers``) and
are named as Claude Code names them, ``plugin_<plugin>_<server>``, so the
skills' ``allowed-tools`` (``mcp__plugin_<plugin>_<server>__<tool>``) read as written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, final

from .._exceptions import ConfigError
from ._server_file import SERVER_FILE, Declared, read_server_file, read_server_map

__all__ = ["MANIFEST", "Plugin", "find_plugins", "load_plugins", "read_plugin"]

MANIFEST = Path(".claude-plugin") / "plugin.json"
# Claude Code's rule for a plugin's name: kebab-case, which also keeps plugin_<name>_<server> a valid server name.
_PLUGIN_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@final
@dataclass(frozen=True)
class Plugin:
    """One Claude Code plugin, read.

    Attributes:
        name: The manifest's ``name``.
        root: The plugin's folder (what ``${CLAUDE_PLUGIN_ROOT}`` stands for).
        skill_folders: Where its skills are (``skills/`` and those the manifest adds), existing or not.
        servers: Its servers, by their toolsift name (``plugin_<plugin>_<server>``), each with the file
            that declares it (``.mcp.json``, the manifest, or one of the files the manifest names).
        problem: Why its servers cannot be used (a bad server file); its skills still load.
    """

    name: str
    root: Path
    skill_folders: tuple[Path, ...]
    servers: Mapping[str, Declared] = field(default_factory=dict)
    problem: str | None = None

    @property
    def manifest(self) -> Path:
        """The ``plugin.json`` file."""
        return self.root / MANIFEST


def find_plugins(path: Path) -> list[Path]:
    """The plugin folders ``path`` stands for: itself when it holds a manifest, else its sub-folders that do.

    Raises:
        ConfigError: ``path`` is neither a plugin nor a folder holding any.
    """
    if (path / MANIFEST).is_file():
        return [path]
    found = sorted(child for child in path.iterdir() if (child / MANIFEST).is_file()) if path.is_dir() else []
    if not found:
        raise ConfigError(
            f"{path} is not a Claude Code plugin (no {MANIFEST}) and holds none; give the plugin's folder",
            field="skills.plugins",
        )
    return found


def read_plugin(root: Path) -> Plugin:
    """Read the plugin at ``root``.

    A problem with its servers is kept in :attr:`Plugin.problem` (its skills
    still load, and say why they cannot work).

    Raises:
        ConfigError: The manifest is missing, not JSON, or has no valid ``name``.
    """
    root = root.resolve()
    manifest = root / MANIFEST
    data = _manifest(manifest)
    name = data.get("name")
    if not isinstance(name, str) or _PLUGIN_NAME.fullmatch(name) is None:
        raise ConfigError(
            f"'name' must be the plugin's id in kebab-case (lowercase letters, digits, single hyphens), got {name!r}",
            path=manifest,
            field="name",
        )
    folders = [root / "skills", *(root / extra for extra in _paths(data.get("skills"), manifest, "skills"))]
    prefix = f"plugin_{name}_"
    try:
        servers = _servers(data.get("mcpServers"), root, manifest, prefix)
    except ConfigError as exc:
        return Plugin(name, root, tuple(dict.fromkeys(folders)), problem=str(exc))
    return Plugin(name, root, tuple(dict.fromkeys(folders)), servers)


def _manifest(manifest: Path) -> dict[str, Any]:
    try:
        data = json.loads(manifest.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise ConfigError(f"no plugin manifest: a Claude Code plugin has {MANIFEST}", path=manifest) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"cannot read the plugin manifest: {exc}", path=manifest) from None
    if not isinstance(data, dict):
        raise ConfigError('expected an object: {"name": "<plugin>", ...}', path=manifest)
    return data


def _paths(value: object, manifest: Path, key: str) -> list[str]:
    if value is None:
        return []
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ConfigError(f"expected a path or a list of paths, got {value!r}", path=manifest, field=key)
    return items


def _servers(value: object, root: Path, manifest: Path, prefix: str) -> dict[str, Declared]:
    """The plugin's servers, each kept with its own file: every file of a list is judged by trust on its own."""
    if isinstance(value, dict):
        return read_server_map(value, path=manifest, root=root, prefix=prefix)
    files = [root / path for path in _paths(value, manifest, "mcpServers")] or [root / SERVER_FILE]
    servers: dict[str, Declared] = {}
    for file in files:
        if file.is_file() or value is not None:  # a file the manifest names must be there
            servers.update(read_server_file(file, root=root, prefix=prefix))
    return servers


def load_plugins(paths: Iterable[Path]) -> tuple[list[Plugin], list[ConfigError]]:
    """Every plugin ``paths`` stand for (see :func:`find_plugins`), and the problem of each that cannot load.

    One broken plugin never stops the others.
    """
    plugins: list[Plugin] = []
    problems: list[ConfigError] = []
    for path in paths:
        try:
            roots = find_plugins(path)
        except (ConfigError, OSError) as exc:
            problems.append(exc if isinstance(exc, ConfigError) else ConfigError(str(exc), field="skills.plugins"))
            continue
        for root in roots:
            try:
                plugins.append(read_plugin(root))
            except ConfigError as exc:
                problems.append(exc)
    return plugins, problems
