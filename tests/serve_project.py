"""A small project for ``toolsift serve`` tests: config, workspace, skills, and ways to serve it."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import StdioServerParameters
from mcp.types import CallToolResult, TextContent
from servers import EXAMPLES

from toolsift.serve import build_server, serve_http
from toolsift.serve._server import ToolsiftServer

REVIEW_SKILL = """\
---
name: review
description: Review one file of the workspace.
allowed-tools: read_file, list_directory, general__echo
variables:
  file: {description: The file to review}
---
Review {{ file }} and list three problems.
"""

HIDDEN_SKILL = """\
---
name: internal-notes
description: Not offered to users.
user-invocable: false
---
Secret process.
"""

EXECUTE_PROFILE = {"default": {"permissions": {"level": "execute"}}}


def write_skill(project: Path, name: str, text: str) -> Path:
    """Write ``skills/<name>/SKILL.md`` of a project."""
    folder = project / "skills" / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    path.write_text(text, encoding="utf-8")
    return path


def general_server(**fields: Any) -> dict[str, Any]:
    """The ``mcpServers`` entry of the example server ``general.py`` (stdio, global tools by default)."""
    return {
        "command": sys.executable,
        "args": [str(EXAMPLES / "general.py")],
        "internalOnly": False,
        "protocol": "legacy",
        **fields,
    }


def write_project(
    project: Path,
    *,
    serve: dict[str, Any] | None = None,
    agents: dict[str, Any] | None = None,
    servers: dict[str, Any] | None = None,
) -> Path:
    """Write ``toolsift.json``, a workspace with ``notes.txt`` and two skills; return the config path."""
    workspace = project / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "notes.txt").write_text("hello notes\n", encoding="utf-8")
    write_skill(project, "review", REVIEW_SKILL)
    write_skill(project, "internal-notes", HIDDEN_SKILL)
    config: dict[str, Any] = {
        "workspace": "ws",
        "skills": {"paths": ["skills"], "userSkills": False},
        "agents": agents if agents is not None else EXECUTE_PROFILE,
        "audit": {"path": "audit.jsonl"},
        "serve": {"commands": {"allowedPrograms": ["echo", "ls"]}, **(serve or {})},
    }
    if servers:
        config["tools"] = {"mcpServers": servers}
    path = project / "toolsift.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


def stdio_params(config: Path, *args: str) -> StdioServerParameters:
    """Start ``toolsift serve`` (the runnable module) over stdio for ``config``."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "toolsift.serve", "--config", str(config), *args], cwd=str(config.parent)
    )


@asynccontextmanager
async def served_http(config: Path, **overrides: Any) -> AsyncIterator[tuple[str, ToolsiftServer]]:
    """Serve ``config`` over HTTP in this process on a free port; yield the URL and the server."""
    server = build_server(config, transport="http", port=0, **overrides)
    async with anyio.create_task_group() as group:
        url = await group.start(serve_http, server)
        try:
            yield url, server
        finally:
            group.cancel_scope.cancel()


def text(result: CallToolResult) -> str:
    """The text blocks of a result, joined."""
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))
