"""Check a JSON value against an SDK's TypedDict annotations, strictly (unknown keys are errors)."""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any

import typing_extensions


def problems(value: Any, annotation: Any, path: str = "$") -> list[str]:
    """What in ``value`` does not fit ``annotation`` (empty when it fits)."""
    origin = typing_extensions.get_origin(annotation)
    args = typing_extensions.get_args(annotation)
    if annotation in (Any, object):
        return []
    if origin in (typing_extensions.Required, typing_extensions.NotRequired, typing_extensions.Annotated):
        return problems(value, args[0], path)
    if origin in (typing.Union, types.UnionType):
        tried = [problems(value, option, path) for option in _candidates(value, args)]
        return [] if any(not p for p in tried) else min(tried, key=len, default=[f"{path}: fits no option"])
    if origin in (typing.Literal, typing_extensions.Literal):
        return [] if value in args else [f"{path}: {value!r} is not one of {args!r}"]
    if typing_extensions.is_typeddict(annotation):
        if not isinstance(value, dict):
            return [f"{path}: expected an object for {annotation.__name__}"]
        hints = typing_extensions.get_type_hints(annotation, include_extras=True)
        # The SDK lets some of them carry more (InputSchemaTyped: any JSON Schema keyword).
        extra = getattr(annotation, "__pydantic_config__", {}).get("extra") == "allow"
        found = [
            f"{path}.{key}: unknown key for {annotation.__name__}" for key in value if key not in hints and not extra
        ]
        found += [
            f"{path}: {annotation.__name__} needs {key!r}" for key in _required(annotation, hints) if key not in value
        ]
        for key, item in value.items():
            if key in hints:
                found += problems(item, hints[key], f"{path}.{key}")
        return found
    if origin in (dict, collections.abc.Mapping) or annotation is dict:
        return [] if isinstance(value, dict) else [f"{path}: expected an object"]
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence) or (
        origin is not None and "SequenceNotStr" in str(annotation)
    ):
        if not isinstance(value, list):
            return [f"{path}: expected a list"]
        return [p for i, item in enumerate(value) for p in problems(item, args[0] if args else Any, f"{path}[{i}]")]
    if annotation is type(None):
        return [] if value is None else [f"{path}: expected null"]
    if annotation is float:
        return [] if isinstance(value, (int, float)) else [f"{path}: expected a number"]
    if isinstance(annotation, type):
        return [] if isinstance(value, annotation) else [f"{path}: expected {annotation.__name__}"]
    return [f"{path}: cannot check {annotation!r}"]


def _candidates(value: Any, options: tuple[Any, ...]) -> list[Any]:
    """The union's options worth reporting against: a block's own ``type`` picks its TypedDict."""
    if isinstance(value, dict) and "type" in value:
        typed = [
            o
            for o in options
            if typing_extensions.is_typeddict(o)
            and "type" in (hints := typing_extensions.get_type_hints(o))
            and not problems(value["type"], hints["type"])
        ]
        if typed:
            return typed
    if isinstance(value, list):
        listed = [o for o in options if not problems([], o)]
        return listed or list(options)
    return list(options)


def _required(annotation: Any, hints: dict[str, Any]) -> list[str]:
    """Required keys, read from the annotations (string annotations hide ``Required`` from ``__required_keys__``)."""
    marked = {key: typing_extensions.get_origin(hint) for key, hint in hints.items()}
    if annotation.__total__:
        return [key for key, origin in marked.items() if origin is not typing_extensions.NotRequired]
    return [key for key, origin in marked.items() if origin is typing_extensions.Required]
