"""Rooms a reader can hold: no module over 400 lines, no function over 60, no two modules that import each other.

Measured from the source (lines of a file; a function from its ``def`` line to its last; imports from the AST,
those under ``if TYPE_CHECKING:`` and inside functions included: a circle of types is still a circle to a reader).
An exception is named below with its reason, and docs/architecture.md says why; a listed file that no longer needs
its exception fails the test, so the list only shrinks.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "toolsift"
MOST_LINES = 400
MOST_FUNCTION_LINES = 60

# The three hubs of the call path and the session's parts, being taken apart where the call path is rebuilt
# (docs/architecture.md, "Sizes"); and an LLM adapter being split beside its prompt-cache work. Each name leaves
# this list when its file is within the limits.
LONG_MODULES = {
    "mcp_sessions/_session.py": "the session's calls and status: the pin holds for added tools and instructions "
    "grew it past the limit as its tools moved out",
    "mcp_sessions/_group.py": "the session group, reworked with the session hub",
    "serve/_server.py": "the gateway hub: shrinks as the session's gateway parts move in and out by job",
    "agent/_conversation.py": "the conversation hub: shrinks with the typed call outcome",
    "agent/llm/openai_responses.py": "the Responses adapter: split by job with its prompt-cache work",
}
LONG_FUNCTIONS = {
    "agent/llm/openai_responses.py:to_responses_input": "the Responses adapter: split by job with its cache work",
}
# Circles inside the session hub, undone with it: a circle found must lie within one of these.
SESSION_CIRCLES: list[set[str]] = []


def _files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _trees() -> dict[str, ast.Module]:
    return {_name(path): ast.parse(path.read_text(), str(path)) for path in _files()}


def test_no_module_is_over_400_lines() -> None:
    long = {_name(p): n for p in _files() if (n := len(p.read_text().splitlines())) > MOST_LINES}
    assert sorted(set(long) - set(LONG_MODULES)) == []
    assert sorted(set(LONG_MODULES) - set(long)) == [], "within the limit now: take it off LONG_MODULES"


def test_no_function_is_over_60_lines() -> None:
    long = {}
    for name, tree in _trees().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MOST_FUNCTION_LINES:
                    long[f"{name}:{node.name}"] = length
    assert sorted(set(long) - set(LONG_FUNCTIONS)) == []
    assert sorted(set(LONG_FUNCTIONS) - set(long)) == [], "within the limit now: take it off LONG_FUNCTIONS"


def _graph() -> dict[str, set[str]]:
    """Module file -> the module files it imports (a name that is a submodule counts as importing that module)."""
    files = {_module(path): _name(path) for path in _files()}
    graph: dict[str, set[str]] = {name: set() for name in files.values()}
    for path in _files():
        module, name = _module(path), _name(path)
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        for node in ast.walk(_trees()[name]):
            if isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                target = ".".join([*base, *([node.module] if node.module else [])])
                for alias in node.names:
                    imported = files.get(f"{target}.{alias.name}") or files.get(target)
                    if imported is not None:
                        graph[name].add(imported)
            elif isinstance(node, ast.Import):
                graph[name].update(files[alias.name] for alias in node.names if alias.name in files)
        graph[name].discard(name)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(group)
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _circles(graph) == [{"a", "b", "c"}]


def test_no_two_modules_import_each_other() -> None:
    circles = _circles(_graph())
    assert [sorted(c) for c in circles if not any(c <= allowed for allowed in SESSION_CIRCLES)] == []
    gone = [sorted(allowed) for allowed in SESSION_CIRCLES if not any(c <= allowed for c in circles)]
    assert gone == [], "undone now: take it off SESSION_CIRCLES"
