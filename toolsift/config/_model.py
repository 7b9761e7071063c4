"""The base of every config model, and the validation context it reads."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

__all__ = ["ConfigModel", "base_dir_of", "key_spellings", "resolve_path"]

# The validation context key that carries the config file's folder.
BASE_DIR = "base_dir"


_SCALAR_NAMES = {bool: "true or false", int: "a whole number", float: "a number"}


def _scalar_kind(annotation: Any) -> type | None:
    """``bool``, ``int`` or ``float`` when a field takes only that (or None alongside it), else None."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _scalar_kind(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        kinds = {_scalar_kind(arg) for arg in get_args(annotation) if arg is not type(None)}
        return kinds.pop() if len(kinds) == 1 else None
    return annotation if annotation in _SCALAR_NAMES else None


class ConfigModel(BaseModel):
    """Frozen, camelCase-or-snake_case, unknown keys refused, no guessing at types.

    Pydantic's lax mode would read ``"internalOnly": "false"`` as False and
    ``"timeout": "30"`` as 30 without a word; a config file is written by a
    person, so a quoted number or boolean is refused with the field's name.
    The one coercion kept is a whole number where a number is expected
    (``"timeout": 30``).

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

    @field_validator("*", mode="before")
    @classmethod
    def _no_guessed_scalars(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        kind = _scalar_kind(field.annotation) if field is not None else None
        if kind is None or value is None:
            return value
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        guessed = (
            isinstance(value, str)
            or (kind is bool and numeric)
            or (kind is not bool and isinstance(value, bool))
            or (kind is int and isinstance(value, float))
        )
        if guessed:
            found = f"the string {value!r}" if isinstance(value, str) else f"{type(value).__name__} {value!r}"
            hint = "; write it without quotes" if isinstance(value, str) else ""
            raise ValueError(f"expected {_SCALAR_NAMES[kind]}, found {found}{hint}")
        return value


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
