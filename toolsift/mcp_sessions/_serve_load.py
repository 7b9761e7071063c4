"""Loading a config for serving, and validating ``serve`` overrides from the command line."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import ValidationError

from .._exceptions import ConfigError
from ._errors import format_field, validation_problems
from ._loading import load_config
from ._model import BASE_DIR
from ._serve_settings import ServeSettings
from ._toolsift_config import ToolsiftConfig

__all__ = ["load_serve_config", "validate_settings"]


def load_serve_config(path: str | os.PathLike[str]) -> tuple[ToolsiftConfig, ServeSettings]:
    """Load a config file and its ``serve`` section.

    Raises:
        ConfigError: When the file cannot be read or is invalid (naming the field).
    """
    config = load_config(Path(path))
    return config, config.serve


def validate_settings(data: object, *, path: Path | None = None) -> ServeSettings:
    """Validate a ``serve`` section; relative paths resolve against ``path``'s folder.

    Raises:
        ConfigError: Listing every invalid field as ``serve.<field>``.
    """
    base_dir = path.parent if path is not None else Path.cwd()
    try:
        return ServeSettings.model_validate(data, context={BASE_DIR: base_dir})
    except ValidationError as exc:
        problems = validation_problems(exc, ServeSettings)
        reason = "; ".join(f"{format_field(('serve', *loc))}: {message}" for loc, message in problems)
        raise ConfigError(reason, path=path) from None
