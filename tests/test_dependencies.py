"""Every third-party package toolsift imports is declared in pyproject.toml, not borrowed from another's needs."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions, requires
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Packages that come with a declared one and move in step with it: toolsift uses them as parts of their
# parent (the MCP SDK's transport and server stack, pydantic's core), at the versions the parent pins.
WITH_PARENT = {
    "httpx2": "mcp",
    "mcp-types": "mcp",
    "pydantic-core": "pydantic",
    "sse-starlette": "mcp",
    "starlette": "mcp",
}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = [req for name, reqs in project["optional-dependencies"].items() if name != "dev" for req in reqs]
    return {_name(req) for req in [*project["dependencies"], *extras]}


def _imported() -> dict[str, str]:
    """Top-level third-party module -> one module of toolsift that imports it."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "toolsift").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.partition(".")[0]
                if top != "toolsift" and top not in sys.stdlib_module_names:
                    found.setdefault(top, str(path.relative_to(ROOT)))
    return found


def test_every_imported_package_is_declared() -> None:
    declared = _declared()
    distributions = packages_distributions()
    undeclared = []
    for module, where in _imported().items():
        names = {_name(dist) for dist in distributions.get(module, [module])}
        if not names & declared and not any(WITH_PARENT.get(name) in declared for name in names):
            undeclared.append(f"{where}: {module} ({', '.join(sorted(names))})")
    assert undeclared == []


def test_a_package_taken_with_its_parent_is_one_the_parent_requires() -> None:
    for package, parent in WITH_PARENT.items():
        assert package in {_name(req) for req in requires(parent) or []}, f"{parent} no longer brings {package}"
