"""What builtin tools never read or write: the files and folders that configure toolsift.

A served model with ``write_file`` in the config's folder could otherwise add
an MCP server to ``toolsift.json`` (hot reload starts it), plant a skill, or
read ``secret://file`` secrets and env files in the clear. :func:`protected_paths`
derives the whole set from a loaded config in one place; a :class:`Workspace`
refuses every path inside it (after links and ``..`` are resolved) and the
``exec_shell`` sandbox hides it from programs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import final

from .._exceptions import ToolsiftError
from .._folders import CONFIG_NAME, PROJECT_CONFIGS, user_cache_folder, user_folder
from .._net import strings_in
from .._secrets._expand import expand_variables
from .._secrets._resolvers import is_secret_reference, parse_secret_reference
from ..config import ServerConfig, StdioServer, ToolsiftConfig

__all__ = ["FollowedProtection", "ProtectedPath", "protected_paths", "within"]

# Folders other clients keep inside a project; a config file in one belongs to the folder above.
_CLIENT_FOLDERS = frozenset({".vscode", ".cursor", ".gemini", ".claude"})


@final
@dataclass(frozen=True)
class ProtectedPath:
    """One file or folder builtin tools never touch, and why.

    Attributes:
        path: An absolute path, as configured (links are resolved when it is checked).
        reason: What it is, as a noun phrase ("the config file toolsift loaded").
        folder: A folder (everything inside is protected too); else a file.
        own: A file toolsift writes itself (the audit log): when missing, the
            sandbox creates it (empty, 0600) rather than hold its name open.
    """

    path: Path
    reason: str
    folder: bool = False
    own: bool = False


def within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it (lexically: resolve both first where links matter)."""
    return path == folder or folder in path.parents


def _absolute(path: Path, base: Path) -> Path:
    path = path.expanduser()
    return Path(os.path.normpath(path if path.is_absolute() else base / path))


def _expanded(raw: str) -> str | None:
    """``raw`` with its ``${VAR}`` references expanded now; None when they cannot be (nothing can read it then)."""
    try:
        return expand_variables(raw, os.environ)
    except ToolsiftError:
        return None


def _server_files(server: ServerConfig) -> Iterator[ProtectedPath]:
    """The env file and the ``secret://file`` files a server reads when it starts."""
    env_file = server.env_file if isinstance(server, StdioServer) else None
    if env_file is not None and (raw := _expanded(env_file)) is not None:
        yield ProtectedPath(_absolute(Path(raw), server.base_dir), f"the env file of server {server.name!r}")
    # Every string setting may be a reference (env, headers, args, auth secrets), so all are read.
    for value in strings_in(server.model_dump(mode="json")):
        if not is_secret_reference(value) or (raw := _expanded(value)) is None:
            continue
        try:
            reference = parse_secret_reference(raw, base_dir=server.base_dir)
        except ToolsiftError:
            continue  # a malformed reference reads no file
        if reference.scheme == "file":
            yield ProtectedPath(
                _absolute(Path(reference.path), server.base_dir), f"a secret file of server {server.name!r}"
            )


def _project_folder(config_file: Path) -> Path:
    folder = config_file.parent
    return folder.parent if folder.name in _CLIENT_FOLDERS else folder


def protected_paths(
    config: ToolsiftConfig,
    *,
    sources: Iterable[str | os.PathLike[str]] = (),
    user_skill_folders: Iterable[str | os.PathLike[str]] = (),
) -> tuple[ProtectedPath, ...]:
    """Everything that configures toolsift for ``config``: what builtin tools must never touch.

    That is: the config file and ``sources`` (other files it was loaded from),
    the other config files toolsift would find in the same project
    (``toolsift.json``, ``.mcp.json``, ``.vscode/mcp.json``, ``.cursor/mcp.json``),
    toolsift's user folder (user config, trust store, OAuth tokens) and cache
    (search embeddings), each server's ``envFile`` and ``secret://file`` files,
    the skill folders, and the audit log. Paths that do not exist yet are
    included: creating them is as much a change of configuration as editing them.

    Args:
        config: The loaded config.
        sources: More files the config was read from, besides ``config.path``.
        user_skill_folders: The user's skill folders, when the config reads them
            (``toolsift/_folders.py: user_folders`` knows where they are).
    """
    found: list[ProtectedPath] = []
    files = [Path(source) for source in sources]
    if config.path is not None:
        files.insert(0, config.path)
    for file in files:
        found.append(ProtectedPath(_absolute(file, Path.cwd()), "a config file toolsift loaded"))
        project = _project_folder(_absolute(file, Path.cwd()))
        found += [
            ProtectedPath(project / name, "a config file toolsift reads in this project")
            for name in (CONFIG_NAME, *PROJECT_CONFIGS)
        ]
    found.append(
        ProtectedPath(user_folder(), "toolsift's user folder (user config, trust store, OAuth tokens)", folder=True)
    )
    # Embeddings and the onnx graph search loads: a program must not plant what ranks or runs there.
    found.append(ProtectedPath(user_cache_folder(), "toolsift's cache (search embeddings)", folder=True))
    for server in config.servers.values():
        found += _server_files(server)
    skill_folders = [*config.skills.paths, *(map(Path, user_skill_folders) if config.skills.user_skills else ())]
    found += [ProtectedPath(_absolute(folder, Path.cwd()), "a skills folder", folder=True) for folder in skill_folders]
    if config.audit.path is not None:
        found.append(ProtectedPath(_absolute(config.audit.path, Path.cwd()), "toolsift's audit log", own=True))
    # One entry per path, the first reason kept (the loaded file before the project's other names).
    unique: dict[Path, ProtectedPath] = {}
    for entry in found:
        unique.setdefault(entry.path, entry)
    return tuple(unique.values())


@final
class FollowedProtection:
    """What builtin tools never touch, for the config in force now.

    A hot reload applies new servers, whose env and secret files must be out
    of reach from then on: the set is derived again whenever the config in
    force is another object, and kept otherwise (checks happen on every call).

    Args:
        config_in_force: The config now in force (the loaded one, or the one a reload applied).
        user_skill_folders: The user's skill folders toolsift reads.
    """

    def __init__(
        self, config_in_force: Callable[[], ToolsiftConfig], *, user_skill_folders: Iterable[Path] = ()
    ) -> None:
        self._config_in_force = config_in_force
        self._user_skill_folders = tuple(user_skill_folders)
        self._derived: tuple[ToolsiftConfig, tuple[ProtectedPath, ...]] | None = None

    def __call__(self) -> tuple[ProtectedPath, ...]:
        config = self._config_in_force()
        derived = self._derived
        if derived is None or derived[0] is not config:
            derived = self._derived = (config, protected_paths(config, user_skill_folders=self._user_skill_folders))
        return derived[1]
