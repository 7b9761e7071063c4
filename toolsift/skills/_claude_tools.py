"""Reading ``allowed-tools`` entries written for Claude Code.

Claude Code names an MCP tool ``mcp__<server>__<tool>`` and reads such a name
back by splitting it on ``__``: the server is the part after ``mcp__`` up to the
next ``__``, the tool is everything after that (``__`` included). toolsift names
the same tool ``<server>__<tool>`` and splits on the first ``__`` as well, so
dropping the ``mcp__`` prefix gives the toolsift name with the same server and
tool; server names that hold ``-`` or a single ``_`` (``claude-flow``,
``my_server``) come through unchanged. ``mcp__<server>`` alone means every tool
of the server, ``<server>__*`` here.

Claude Code's own tools (``Read``, ``WebFetch``) and its permission rules
(``Bash(git add:*)``) name nothing toolsift has. They are kept as written, match
no tool (a rule holds parentheses, which no tool name does), and the parser
warns about each.
"""

from __future__ import annotations

import re

__all__ = ["CLAUDE_CODE_TOOLS", "foreign_reason", "from_claude_code"]

#: Claude Code's built-in tools, current and former names (its tools reference).
CLAUDE_CODE_TOOLS = frozenset(
    {
        "Agent",
        "Artifact",
        "AskUserQuestion",
        "Bash",
        "BashOutput",
        "Edit",
        "EnterPlanMode",
        "EnterWorktree",
        "ExitPlanMode",
        "ExitWorktree",
        "Glob",
        "Grep",
        "KillShell",
        "LS",
        "LSP",
        "ListMcpResourcesTool",
        "MultiEdit",
        "NotebookEdit",
        "NotebookRead",
        "PowerShell",
        "Read",
        "ReadMcpResourceTool",
        "Skill",
        "SlashCommand",
        "Task",
        "TaskCreate",
        "TaskGet",
        "TaskList",
        "TaskOutput",
        "TaskStop",
        "TaskUpdate",
        "TodoRead",
        "TodoWrite",
        "ToolSearch",
        "WebFetch",
        "WebSearch",
        "Write",
    }
)
_MCP_PREFIX = "mcp__"
_SEPARATOR = "__"
# ``Tool(specifier)``: the specifier may hold anything, spaces included.
_RULE = re.compile(r"(?P<tool>[A-Za-z][A-Za-z0-9_-]*)\(.*\)", re.DOTALL)


def from_claude_code(entry: str) -> str:
    """The toolsift pattern for a Claude Code MCP name; any other entry as given.

    ``mcp__S__t`` -> ``S__t``, ``mcp__S__*`` and ``mcp__S`` -> ``S__*``. A rule
    with a specifier (``mcp__S__t(...)``) and a bare ``mcp__`` are left alone.
    """
    rest = entry.removeprefix(_MCP_PREFIX)
    if rest == entry or not rest or "(" in entry:
        return entry
    server, _, tool = rest.partition(_SEPARATOR)
    return f"{server}{_SEPARATOR}{tool or '*'}"


def foreign_reason(entry: str) -> str | None:
    """Why an entry names no toolsift tool, or None when it is a toolsift pattern."""
    rule = _RULE.fullmatch(entry)
    if rule is not None:
        return f"is a Claude Code permission rule for its {rule['tool']!r} tool"
    if entry in CLAUDE_CODE_TOOLS:
        return "is a Claude Code built-in tool"
    return None
