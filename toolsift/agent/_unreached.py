"""Why a skill's ``allowed-tools`` patterns reach no tool, and the one command or setting that fixes each.

``/use`` says how many tools are in scope; when a pattern reaches none, a bare
count leaves the reader to guess (the workspace tools are off, the server is
not configured or is down, the agent may not call them). This names the cause.
"""

from __future__ import annotations

from collections.abc import Iterable

from .._globs import compile_patterns, literal_server
from ..builtins._internal import builtin_tool_names
from ..registry import ToolRegistry, TurnScope

__all__ = ["unreached"]

WORKSPACE_TOOLS_OFF = (
    "the workspace tools are off in this config: 'toolsift builtins on' turns them on (tools.builtins.enabled)"
)


def unreached(registry: ToolRegistry, patterns: Iterable[str], scope: TurnScope) -> list[str]:
    """One line per pattern that reaches no tool of ``scope``: the pattern, then why and what to do."""
    shown = {tool.spec.name for tool in registry.visible_tools(scope)}
    lines = []
    for pattern in patterns:
        matcher = compile_patterns([pattern])
        if not any(matcher.matches(name) for name in shown):
            lines.append(f"{pattern}: {_why(registry, pattern, scope)}")
    return lines


def _why(registry: ToolRegistry, pattern: str, scope: TurnScope) -> str:
    matcher = compile_patterns([pattern])
    registered = [tool.spec.name for tool in registry if matcher.matches(tool.spec.name)]
    if registered:
        hidden = registry.hidden_reason(registered[0], scope)
        return f"{registered[0]} is left out at layer {hidden[0]}: {hidden[1]}" if hidden else "no tool matches"
    if any(matcher.matches(name) for name in builtin_tool_names()):
        return WORKSPACE_TOOLS_OFF
    server = literal_server(pattern)
    if server is not None and server not in registry.servers():
        return (
            f"no tool of server {server!r} is registered: it is not configured ('toolsift mcp add {server} -- "
            "COMMAND'), or it did not start ('toolsift servers' says why)"
        )
    return "no registered tool matches it ('toolsift tools PATTERN' lists the tools there are)"
