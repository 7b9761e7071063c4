"""What every call's arguments must be before any layer looks deeper: shallow, and encodable.

Two shapes of valid JSON break things downstream, so they are refused before the
tool runs, whatever its schema says:

- A lone surrogate (``"\\ud800"``) is valid JSON and a valid Python string, but
  not UTF-8: sending it crashed a server's connection and every call in flight
  on it.
- Deep nesting (500 levels parse fine) overflows the recursion of schema
  validation, audit redaction and serialisers, after the tool may have run.

The walk is iterative, so it cannot overflow itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["MAX_ARGUMENT_DEPTH", "argument_problems"]

#: Deepest nesting of objects and arrays a call's arguments may have.
MAX_ARGUMENT_DEPTH: Final = 64


def _path(parts: tuple[str | int, ...]) -> str:
    return "/".join(map(str, parts)) or "(root)"


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def argument_problems(arguments: Mapping[str, Any]) -> tuple[list[str], bool]:
    """Messages for what in ``arguments`` cannot be sent (empty when they are fine), and whether a null occurs.

    The null flag spares the strict-mode clean-up a second walk on the many
    calls that carry no null at all.
    """
    problems: list[str] = []
    has_null = False
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(arguments, ())]
    while stack and len(problems) < 5:
        value, where = stack.pop()
        if isinstance(value, str):
            if not _encodes(value):
                problems.append(f"{_path(where)}: the string holds a lone surrogate, which is not valid UTF-8")
            continue
        if value is None:
            has_null = True
            continue
        if not isinstance(value, Mapping | list | tuple):
            continue
        if len(where) >= MAX_ARGUMENT_DEPTH:
            problems.append(f"{_path(where[:3])}/...: nested more than {MAX_ARGUMENT_DEPTH} levels deep")
            continue
        if isinstance(value, Mapping):
            for key, item in value.items():
                if isinstance(key, str) and not _encodes(key):
                    problems.append(f"{_path(where)}: a key holds a lone surrogate, which is not valid UTF-8")
                stack.append((item, (*where, str(key))))
        else:
            stack.extend((item, (*where, index)) for index, item in enumerate(value))
    return problems, has_null
