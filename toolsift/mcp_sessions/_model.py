"""The base of every config model, and the validation context it reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo
from pydantic.alias_generators import to_camel

__all__ = ["ConfigModel", "base_dir_of", "key_spellings", "resolve_path"]

# The validation context key that carries the config file's folder.
BASE_DIR = "base_dir"


class ConfigModel(BaseModel):
    """Frozen, camelCase-or-snake_case, unknown keys refused.

    Validate with ``context={"base_dir": folder}`` so relative paths resolve
    against the config file's folder; without it they resolve against the
    current directory at validation time.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        frozen=True,
        extra="forbid",
        validate_default=False,
    )


def key_spellings(model: type[BaseModel]) -> dict[str, str]:
    """Map every key a model accepts (snake_case, camelCase, extra aliases) to its field name."""
    spellings: dict[str, str] = {}
    for name, info in model.model_fields.items():
        spellings[name] = name
        for alias in (info.alias, info.validation_alias):
            if isinstance(alias, str):
                spellings[alias] = name
    return spellings


def base_dir_of(info: ValidationInfo) -> Path:
    """The config file's folder from the validation context, else the current directory."""
    context: Any = info.context
    base_dir = context.get(BASE_DIR) if isinstance(context, dict) else None
    return base_dir if isinstance(base_dir, Path) else Path.cwd()


def resolve_path(value: Path, info: ValidationInfo) -> Path:
    """``~`` expanded, then made absolute against the config file's folder."""
    path = value.expanduser()
    return path if path.is_absolute() else base_dir_of(info) / path
