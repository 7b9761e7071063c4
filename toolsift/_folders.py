"""Where toolsift looks: a project's config file names, the user folder, the config file to use, skill folders.

Shared by config, sessions (OAuth tokens), the builtins (protected paths), the toolbox and the CLI
(a root module: every package may import it; none of it is public).
"""

from __future__ import annotations

import os
from pathlib import Path

from ._exceptions import ConfigError

__all__ = [
    "CONFIG_NAME",
    "PROJECT_CONFIGS",
    "default_user_dir",
    "default_user_dirs",
    "find_config",
    "user_cache_folder",
    "user_config_path",
    "user_folder",
    "user_folders",
]

#: toolsift's own config file, in a project folder or in :func:`user_folder`.
CONFIG_NAME = "toolsift.json"
#: Other clients' project files, looked for (in this order) when a project has no ``toolsift.json``.
PROJECT_CONFIGS = (".mcp.json", ".vscode/mcp.json", ".cursor/mcp.json")


def user_folder() -> Path:
    """``$XDG_CONFIG_HOME/toolsift`` (``~/.config/toolsift`` when the variable is unset or empty).

    It holds the user config (``toolsift.json``), the trust store
    (``trusted-projects.json``) and the OAuth token store (``oauth/``). Read
    at every call, so a changed ``$XDG_CONFIG_HOME`` (a test, an embedding
    application) is followed.
    """
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "toolsift"


def user_cache_folder() -> Path:
    """``$XDG_CACHE_HOME/toolsift`` (``~/.cache/toolsift``): where search keeps embeddings, read at every call."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolsift"


def user_config_path() -> Path:
    """The user config: ``toolsift.json`` in :func:`user_folder` (``~/.config/toolsift``)."""
    return user_folder() / CONFIG_NAME


def find_config(path: str | os.PathLike[str] | None = None) -> Path:
    """Return the config file to use: ``path``, else the first one found of those below.

    In order: ``./toolsift.json``, ``./.mcp.json`` (Claude Code), ``./.vscode/mcp.json``
    (VS Code), ``./.cursor/mcp.json`` (Cursor), then the user config: the project's own
    files before the user's, and toolsift's own file before another client's.

    Raises:
        ConfigError: When ``path`` does not exist, or no config is found (naming
            every place looked at).
    """
    if path is not None:
        explicit = Path(path)
        if not explicit.is_file():
            raise ConfigError("config file not found", path=explicit)
        return explicit
    candidates = [Path.cwd() / name for name in (CONFIG_NAME, *PROJECT_CONFIGS)] + [user_config_path()]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    looked = ", ".join(str(c) for c in candidates)
    raise ConfigError(f"no config file found; looked at {looked}. Pass a path or create {CONFIG_NAME}")


def default_user_dir() -> Path:
    """The user's skill folder, ``~/.toolsift/skills``."""
    return Path.home() / ".toolsift" / "skills"


def default_user_dirs() -> tuple[Path, ...]:
    """The user's skill folders: toolsift's own, then Claude Code's (``~/.claude/skills``).

    A user's existing Claude Code skills load as they are, after toolsift's own.
    """
    return default_user_dir(), Path.home() / ".claude" / "skills"


def user_folders(enabled: bool, override: str | os.PathLike[str] | None = None) -> tuple[Path, ...]:
    """The user skill folders a config asks for (``skills.userSkills``): ``override`` alone, else the defaults.

    Args:
        enabled: Whether user skills are wanted at all.
        override: One folder to read instead of :func:`default_user_dirs` (tests, embedding).
    """
    if not enabled:
        return ()
    return (Path(override),) if override is not None else default_user_dirs()
