"""A client's own top-level keys that bear on its servers: VS Code's ``inputs``, Gemini CLI's ``mcp`` lists."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, final

from .._json_lines import Loc
from ._dialect import Dialect

__all__ = ["FileSettings", "read_file_keys"]


@final
@dataclass(frozen=True)
class FileSettings:
    """What the top level of a file says about its servers.

    Attributes:
        inputs: VS Code's declared inputs by id, with their descriptions.
        allowed: Gemini CLI's ``mcp.allowed``: when set, only these servers start.
        excluded: Gemini CLI's ``mcp.excluded``: these servers do not start.
    """

    inputs: Mapping[str, str] = field(default_factory=dict)
    allowed: frozenset[str] | None = None
    excluded: frozenset[str] = frozenset()

    def disables(self, server: str) -> bool:
        """True when the file turns ``server`` off outside its entry."""
        return server in self.excluded or (self.allowed is not None and server not in self.allowed)


def _names(value: Any) -> frozenset[str] | None:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return frozenset(value)
    return None


def _inputs(value: Any, notes: list[tuple[Loc, str]]) -> dict[str, str]:
    found: dict[str, str] = {}
    if not isinstance(value, list):
        notes.append((("inputs",), 'ignored: expected a list of inputs ({"id": ..., "description": ...})'))
        return found
    for index, item in enumerate(value):
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            description = item.get("description")
            found[item["id"]] = description if isinstance(description, str) else ""
        else:
            notes.append((("inputs", index), "ignored: an input needs a string 'id'"))
    return found


def _gemini_mcp(value: Any, notes: list[tuple[Loc, str]]) -> tuple[frozenset[str] | None, frozenset[str]]:
    if not isinstance(value, dict):
        notes.append((("mcp",), "ignored: expected an object with 'allowed' and 'excluded' lists of server names"))
        return None, frozenset()
    lists: dict[str, frozenset[str] | None] = {}
    for key, item in value.items():
        if key in ("allowed", "excluded"):
            lists[key] = _names(item)
            if lists[key] is None:
                notes.append((("mcp", key), "ignored: expected a list of server names"))
        else:
            notes.append(
                (("mcp", key), f"ignored: {key!r} is Gemini CLI's; toolsift starts each server from its own entry")
            )
    return lists.get("allowed"), lists.get("excluded") or frozenset()


def read_file_keys(rest: dict[str, Any], dialect: Dialect) -> tuple[FileSettings, list[tuple[Loc, str]]]:
    """Take the dialect's own top-level keys out of ``rest`` and read them.

    Returns:
        The settings, and warnings as (location, message).
    """
    notes: list[tuple[Loc, str]] = []
    inputs: dict[str, str] = {}
    allowed: frozenset[str] | None = None
    excluded: frozenset[str] = frozenset()
    for key in dialect.file_keys:
        if key not in rest:
            continue
        value = rest.pop(key)
        if key == "inputs":
            inputs = _inputs(value, notes)
        elif key == "mcp":
            allowed, excluded = _gemini_mcp(value, notes)
    return FileSettings(inputs, allowed, excluded), notes
