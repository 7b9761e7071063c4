"""How a server's settings resolve where it runs, known without starting it.

What project trust fingerprints (``_fingerprint``) and what the trust rule of
a skill's servers judges (``toolsift._skill_servers``) must resolve a launch
the same way the start does: ``${VAR}`` from the environment, a relative path
against the config file's folder, a child without ``cwd`` in toolsift's own
folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from .._exceptions import SecretError
from .._secrets._expand import expand_variables, has_references
from .._secrets._resolvers import is_secret_reference
from ._server import StdioServer

__all__ = ["absolute_path", "expanded_now", "found_in", "launch_folder"]


def expanded_now(value: str) -> str | None:
    """``value`` with ``${VAR}`` expanded from the environment; None for a secret or an unset variable.

    A secret is never read for this, and an unset variable stops the start anyway.
    """
    if is_secret_reference(value):
        return None
    if not has_references(value):
        return value
    try:
        return expand_variables(value, os.environ)
    except SecretError:
        return None


def absolute_path(value: str, base: Path) -> Path:
    """``value`` (``~`` expanded) as an absolute path, a relative one taken against ``base``."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path


def launch_folder(server: StdioServer, cwd: Path) -> Path | None:
    """The real folder a stdio child starts in: its ``cwd`` (against the config's folder), else ``cwd``.

    None when its ``cwd`` is known only at the start (a secret, an unset variable).
    """
    if server.cwd is None:
        return Path(os.path.realpath(cwd))
    plain = expanded_now(server.cwd)
    return None if plain is None else Path(os.path.realpath(absolute_path(plain, server.base_dir)))


def found_in(value: str, folder: Path) -> Path | None:
    """The real path of what a relative ``value`` names in ``folder``; None for an absolute or empty value,
    or one that names nothing there (a word such as ``--verbose`` is no path)."""
    if not value or Path(value).expanduser().is_absolute():
        return None
    target = folder / value
    return Path(os.path.realpath(target)) if os.path.lexists(target) else None
