"""A skill's template variables: one declared variable, the name reserved for the argument text, and the two
written forms of the list (names, or a mapping of names to their settings)."""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping
from typing import Any, Final, final

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

__all__ = ["RESERVED_VARIABLE", "SkillVariable", "normalise_variables", "scalar_to_str"]

#: Always defined while rendering: the raw argument text, like Claude Code's ``$ARGUMENTS``.
RESERVED_VARIABLE: Final = "arguments"
# Variables are Jinja names: a hyphen would parse as a subtraction.
_VARIABLE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_JINJA_LITERALS = frozenset({"true", "false", "none"})


def scalar_to_str(value: object) -> object:
    # YAML reads ``version: 1.0`` or ``default: 3`` as numbers; the author meant text.
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


@final
class SkillVariable(BaseModel):
    """One template variable a skill declares.

    A variable with a default is optional; one without is required unless it says
    ``required: false``, in which case it renders as the empty string when not given.

    Attributes:
        name: A Jinja name (letters, digits, underscores; starts with a letter).
        description: What to pass, shown in ``/skills`` and usage messages.
        default: The value used when the variable is not given.
        required: Whether ``/use`` must give it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    default: str | None = None
    required: bool = True

    @model_validator(mode="before")
    @classmethod
    def _required_unless_default(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "required" not in data:
            return {**data, "required": data.get("default") is None}
        return data

    @field_validator("default", mode="before")
    @classmethod
    def _default_as_text(cls, value: object) -> object:
        return scalar_to_str(value)

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not _VARIABLE_NAME.fullmatch(name):
            raise ValueError(
                f"variable name {name!r} must start with a letter and hold only letters, digits and underscores"
            )
        if name == RESERVED_VARIABLE:
            raise ValueError(f"{RESERVED_VARIABLE!r} is reserved: it always holds the raw argument text")
        if keyword.iskeyword(name) or name in _JINJA_LITERALS:
            raise ValueError(f"variable name {name!r} is a reserved word")
        return name

    @model_validator(mode="after")
    def _default_or_required(self) -> SkillVariable:
        if self.required and self.default is not None:
            raise ValueError(f"variable {self.name!r} has a default, so it cannot be required")
        return self

    @property
    def fallback(self) -> str | None:
        """The value used when the variable is not given, or None when it is required."""
        if self.required:
            return None
        return self.default if self.default is not None else ""


def normalise_variables(value: object) -> object:
    """Normalise the two written forms of ``variables`` to ``{name: {...}}``."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return {
            key: {"name": key} if spec is None else {**spec, "name": key} if isinstance(spec, Mapping) else spec
            for key, spec in value.items()
        }
    if not isinstance(value, list | tuple):
        raise ValueError(
            "expected a list of variable names or a mapping name -> {description, default, required}, "
            f"got {type(value).__name__}"
        )
    normalised: dict[Any, object] = {}
    for item in value:
        if isinstance(item, SkillVariable):
            key: object = item.name
        elif isinstance(item, str):
            key, item = item, {"name": item}
        elif isinstance(item, Mapping) and "name" in item:
            key = item["name"]
        else:
            raise ValueError(f"each entry must be a variable name or a mapping with a 'name' key, got {item!r}")
        if key in normalised:
            raise ValueError(f"variable {key!r} is declared twice")
        normalised[key] = item
    return normalised
