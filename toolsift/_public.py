"""Make re-exported names report their public module, as httpx does."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["publish"]


def publish(namespace: Mapping[str, Any], module: str, names: Iterable[str]) -> None:
    """Set ``__module__`` of each class and function in ``names`` to ``module``.

    Reprs, tracebacks and docs then show ``toolsift.registry.ToolRegistry``
    rather than the private module that defines it.
    """
    for name in names:
        obj = namespace[name]
        if isinstance(obj, type) or callable(obj):
            # Some objects (builtins, typing aliases) refuse the assignment; they keep their module.
            with contextlib.suppress(AttributeError, TypeError):
                obj.__module__ = module
