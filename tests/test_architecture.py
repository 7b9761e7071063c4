"""The package's shape: imports point one way, and no package reaches into another's private modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "toolsift"
# What each room may import (besides the shared root modules in SHARED); README "Architecture".
ALLOWED = {
    "registry": set(),
    "config": {"registry"},
    "skills": {"registry"},
    "mcp_sessions": {"registry", "config"},
    "builtins": {"registry", "config"},
    "pipeline": {"registry", "config", "builtins"},
    "search": {"registry", "config", "mcp_sessions", "skills"},
    # The composition root: what a config describes, built once for the toolbox and the server.
    "_assembly": {"registry", "config", "mcp_sessions", "skills", "search", "builtins", "pipeline"},
    "serve": {"registry", "config", "mcp_sessions", "skills", "search", "builtins", "pipeline", "_assembly", "(root)"},
    "agent": {"registry", "config", "mcp_sessions", "skills", "search", "builtins", "pipeline"},
    "toolbox": {"registry", "config", "mcp_sessions", "skills", "search", "builtins", "pipeline", "_assembly", "agent"},
    "cli": {
        "registry",
        "config",
        "mcp_sessions",
        "skills",
        "search",
        "builtins",
        "pipeline",
        "agent",
        "serve",
        "_assembly",
        "toolbox",
        "(root)",
    },
}
# Root modules every room may use: the exception tree, publishing names, the secret markers and their helpers.
SHARED = {"_exceptions", "_public", "_redaction"}


def _imports() -> list[tuple[str, str, str]]:
    """(importing room, imported module, where) for every import of a toolsift module."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        package = parts[:-1]  # the package a relative import starts from, for modules and __init__ alike
        if parts[-1] == "__init__":
            parts = parts[:-1]
        room = parts[1] if len(parts) > 1 else "(root)"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target == "toolsift" or target.startswith("toolsift."):
                found.append((room, target, f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"))
    return found


IMPORTS = _imports()


def test_the_walk_finds_imports_between_rooms() -> None:
    assert any(room == "serve" and target.startswith("toolsift.mcp_sessions") for room, target, _ in IMPORTS)


@pytest.mark.parametrize("room", sorted(ALLOWED))
def test_imports_point_one_way(room: str) -> None:
    wrong = []
    for importer, target, where in IMPORTS:
        parts = target.split(".")
        imported = parts[1] if len(parts) > 1 else "(root)"
        if importer == room and imported != room and imported not in SHARED and imported not in ALLOWED[room]:
            wrong.append(f"{where}: {target}")
    assert wrong == []


def test_no_room_imports_another_rooms_private_module() -> None:
    wrong = []
    for importer, target, where in IMPORTS:
        parts = target.split(".")
        room = parts[1] if len(parts) > 1 else "(root)"
        private = [p for p in parts[2:] if p.startswith("_")]
        if room != importer and room not in SHARED and private:
            wrong.append(f"{where}: {target}")
    assert wrong == []
