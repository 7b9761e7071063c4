"""The checked kinds of value a server setting holds: references, environment and header names, durations.

A reference (``${VAR}``, ``${VAR:-default}``, ``secret://``) is only checked for its syntax here; it is
resolved at connect time, so secrets never sit in a config object.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, Field

from .._secrets._expand import reference_problem
from .._secrets._resolvers import is_secret_reference, parse_secret_reference

__all__ = ["DrainSeconds", "EnvName", "Expandable", "HeaderName", "Seconds"]

_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _check_reference(value: str) -> str:
    # Messages never include the value: it may be, or embed, a credential.
    problem = reference_problem(value)
    if problem is not None:
        raise ValueError(problem)
    if is_secret_reference(value):
        parse_secret_reference(value, base_dir=Path())
    return value


def _check_env_name(name: str) -> str:
    if not name or "=" in name or "\0" in name:
        raise ValueError(f"environment variable name {name!r} must be non-empty and hold no '=' or NUL")
    return name


def _check_header_name(name: str) -> str:
    if not _HEADER_NAME.fullmatch(name):
        raise ValueError(f"header name {name!r} is not a valid HTTP field name")
    return name


# A setting that may hold ${VAR}, ${VAR:-default} or a whole-value secret:// reference.
Expandable = Annotated[str, AfterValidator(_check_reference)]
EnvName = Annotated[str, AfterValidator(_check_env_name)]
HeaderName = Annotated[str, AfterValidator(_check_header_name)]
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
# How long a draining session may finish its calls; 0 cancels them at once.
DrainSeconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]
