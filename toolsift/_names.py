"""Naming rules for servers and tools, and the ``server__tool`` convention.

Shared by the registry, config, sessions, search and serving (a root module: every
package may import it; none of it is public).
"""

from __future__ import annotations

import re

from ._exceptions import InvalidToolName

__all__ = [
    "SEARCH_TOOL_NAME",
    "SEPARATOR",
    "SERVED_BUILTIN_NAMESPACE",
    "namespace_of",
    "split_name",
    "validate_server_name",
    "validate_tool_name",
]

SEPARATOR = "__"
# The namespace under which ``toolsift serve`` serves bare-named tools.
SERVED_BUILTIN_NAMESPACE = "builtin"
# The tool that searches the registry (the agent loop and serving offer it under this name).
SEARCH_TOOL_NAME = "search_tools"
SERVER_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
# MCP (2025-11-25) recommends 1-128 characters from letters, digits, '_', '-' and '.';
# '/' is accepted too because deployed servers use it. Provider exports alias the rest.
TOOL_PART_RE = re.compile(r"[A-Za-z0-9_./-]{1,128}")


def validate_server_name(name: object, *, field: str = "server name") -> str:
    """Return ``name`` if it is a valid server name (or tool namespace).

    Raises:
        InvalidToolName: Naming the value and the rule it breaks.
    """
    if not isinstance(name, str) or not SERVER_NAME_RE.fullmatch(name):
        raise InvalidToolName(str(name), f"{field} must match [A-Za-z0-9][A-Za-z0-9_-]* (letters, digits, '_' and '-')")
    if SEPARATOR in name:
        raise InvalidToolName(name, f"{field} must not contain {SEPARATOR!r}: it separates server and tool")
    return name


def validate_tool_name(name: object) -> str:
    """Return ``name`` if it is a valid canonical tool name.

    A bare name (builtin tools) uses the MCP tool-name characters and holds no
    ``__``; a namespaced name is ``server__tool`` with a valid server part.

    Raises:
        InvalidToolName: Naming the value and the rule it breaks.
    """
    if not isinstance(name, str):
        raise InvalidToolName(repr(name), f"expected a string, got {type(name).__name__}")
    namespace, tool = split_name(name)
    if namespace is not None and not (SERVER_NAME_RE.fullmatch(namespace) and SEPARATOR not in namespace):
        raise InvalidToolName(name, "the part before '__' must be a server name: [A-Za-z0-9][A-Za-z0-9_-]*")
    if not TOOL_PART_RE.fullmatch(tool):
        raise InvalidToolName(name, "tool names use 1-128 characters from letters, digits, '_', '-', '.' and '/'")
    return name


def split_name(name: str) -> tuple[str | None, str]:
    """Split a canonical name on its FIRST ``__`` into (namespace, tool)."""
    head, sep, tail = name.partition(SEPARATOR)
    return (head, tail) if sep else (None, name)


def namespace_of(name: str) -> str | None:
    """The part before the first ``__``, or None for a bare name."""
    head, sep, _ = name.partition(SEPARATOR)
    return head if sep else None
