"""Loading a config file for serving: the whole config and its ``serve`` section."""

from __future__ import annotations

import os
from pathlib import Path

from ..config import ToolsiftConfig, load_config
from ..config._internal import ServeSettings

__all__ = ["load_serve_config"]


def load_serve_config(path: str | os.PathLike[str]) -> tuple[ToolsiftConfig, ServeSettings]:
    """Load a config file and its ``serve`` section.

    Raises:
        ConfigError: When the file cannot be read or is invalid (naming the field).
    """
    config = load_config(Path(path))
    return config, config.serve
