"""Finding one of the extensions a call record carries by its type."""

from __future__ import annotations

from typing import TypeVar

__all__ = ["find_extension"]

E = TypeVar("E")


def find_extension(extensions: tuple[object, ...], kind: type[E]) -> E | None:
    """The first of ``extensions`` that is a ``kind``, or None."""
    for extension in extensions:
        if isinstance(extension, kind):
            return extension
    return None
