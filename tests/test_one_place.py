"""Cross-cutting concepts are written down in one module each, and the others call it."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "toolsift"


def _spellings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string constant in the module, docstrings left out (they may name anything)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    documented = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in documented
    ]


@functools.cache
def spellings() -> dict[str, list[tuple[int, str]]]:
    """Every module's string constants, parsed on first use (not at collection, which every worker pays for)."""
    return {path.relative_to(PACKAGE).as_posix(): _spellings(path) for path in sorted(PACKAGE.rglob("*.py"))}


@pytest.mark.parametrize(
    ("spelling", "owner"),
    [
        pytest.param("[redacted]", "_redaction.py", id="redaction marker"),
        pytest.param("***", "_redaction.py", id="settings mask"),
        pytest.param("UNTRUSTED TOOL RESULT", "_fence.py", id="untrusted fence"),
        pytest.param("XDG_CONFIG_HOME", "_folders.py", id="user folder"),
    ],
)
def test_a_concept_is_spelled_by_its_owner_alone(spelling: str, owner: str) -> None:
    where = sorted({module for module, found in spellings().items() for _, text in found if spelling in text})
    assert where == [owner]
