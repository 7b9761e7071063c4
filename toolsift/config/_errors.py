"""Pydantic validation errors rewritten as config-file problems.

Pydantic's messages speak of "inputs" and "extra inputs"; a config file's user
needs the key as written, what was expected, what was found and, for an
unknown key, the close matches and the valid keys. Values are shown only for
settings that cannot hold secrets.
"""

from __future__ import annotations

import difflib
import types
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

from ._json_lines import Loc
from ._model import key_spellings

__all__ = ["format_field", "validation_problems"]

# Fields whose values may be or embed credentials: their input is never echoed.
_SECRET_BEARING = frozenset({"command", "args", "env", "cwd", "url", "headers"})
_JSON_TYPES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "a boolean"),
    ((int, float), "a number"),
    (str, "a string"),
    (dict, "an object"),
    ((list, tuple), "an array"),
)
# Pydantic messages that read badly for a JSON file.
_MESSAGES = {"path_type": "expected a path (a string)"}


def format_field(loc: Loc) -> str:
    """``('tools', 'permissions', 0, 'match')`` -> ``tools.permissions[0].match``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _unions(annotation: Any) -> tuple[Any, ...]:
    # typing flattens nested unions, so one level is all there is.
    return get_args(annotation) if get_origin(annotation) in (Union, types.UnionType) else (annotation,)


def _child(annotation: Any, part: str | int) -> Any:
    """The annotation of ``part`` inside a value of type ``annotation``, or None."""
    for member in _unions(annotation):
        origin = get_origin(member)
        if isinstance(member, type) and issubclass(member, BaseModel) and isinstance(part, str):
            name = key_spellings(member).get(part)
            if name is not None:
                return member.model_fields[name].annotation
        elif origin is dict and isinstance(part, str):
            return get_args(member)[1]
        elif origin in (list, tuple) and isinstance(part, int):
            return get_args(member)[0]
    return None


def _model_at(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    """The model that validated the object at ``loc`` (relative to ``model``)."""
    annotation: Any = model
    for part in loc:
        annotation = _child(annotation, part)
    return next((m for m in _unions(annotation) if isinstance(m, type) and issubclass(m, BaseModel)), None)


def _unknown_key(model: type[BaseModel] | None, key: str) -> str:
    if model is None:
        return f"unknown key {key!r}"
    spellings = key_spellings(model)
    if key in spellings:
        return f"{key!r} repeats a setting already given under another spelling; give it once"
    # One spelling per key (camelCase, plus extra aliases such as `type`); internal fields are not listed.
    valid = sorted(
        spelling
        for spelling, name in spellings.items()
        if (spelling != name or name == to_camel(name)) and not model.model_fields[name].exclude
    )
    close = difflib.get_close_matches(key, list(spellings), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else "."
    return f"unknown key {key!r}{hint} Valid keys: {', '.join(valid)}"


def _reason(error: ErrorDetails, model: type[BaseModel] | None) -> str:
    kind = error["type"]
    loc = error["loc"]
    if kind == "extra_forbidden":
        return _unknown_key(model, str(loc[-1]))
    if kind == "value_error":
        return str(error.get("ctx", {}).get("error", error["msg"]))
    if kind == "missing":
        return "this key is required"
    message = _MESSAGES.get(kind) or error["msg"].replace("Input should be", "expected", 1)
    value = error["input"]
    # A value is echoed only when it is a scalar of a setting that cannot hold a secret.
    if isinstance(value, str | int | float | bool) and not _SECRET_BEARING.intersection(str(p) for p in loc):
        return f"{message}, found {value!r}"
    return f"{message}, found {_json_type(value)}"


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    for kinds, name in _JSON_TYPES:
        if isinstance(value, kinds):
            return name
    return type(value).__name__


def validation_problems(exc: ValidationError, model: type[BaseModel]) -> list[tuple[Loc, str]]:
    """Each error of ``exc`` as (location as written, reason), ``model`` being what was validated."""
    problems: list[tuple[Loc, str]] = []
    for error in exc.errors(include_url=False):
        # Dict-key errors end in '[key]'; the key itself is the location to show.
        loc: Loc = tuple(part for part in error["loc"] if part != "[key]")
        owner = _model_at(model, loc[:-1]) if error["type"] == "extra_forbidden" else None
        problems.append((loc, _reason(error, owner)))
    return problems
