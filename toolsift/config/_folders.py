"""Where toolsift looks for config: the file names of a project, and the folder of the user."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CONFIG_NAME", "PROJECT_CONFIGS", "user_folder"]

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
