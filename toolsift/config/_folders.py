"""toolsift's folder of the user, where what belongs to the user and not to a project is kept."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["user_folder"]


def user_folder() -> Path:
    """``$XDG_CONFIG_HOME/toolsift`` (``~/.config/toolsift`` when the variable is unset or empty).

    It holds the user config (``toolsift.json``), the trust store
    (``trusted-projects.json``) and the OAuth token store (``oauth/``). Read
    at every call, so a changed ``$XDG_CONFIG_HOME`` (a test, an embedding
    application) is followed.
    """
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "toolsift"
