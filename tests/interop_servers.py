"""Third-party MCP servers installed for interop tests (``.ci/run`` installs them), and skip marks."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import anyio
import pytest
from waits import CHILD_SECONDS

from toolsift.config import ServerConfig, StdioServer
from toolsift.registry import ToolRegistry

PREFIX = Path(os.environ.get("TOOLSIFT_INTEROP_DIR", Path(__file__).resolve().parents[1] / ".interop"))
EVERYTHING = PREFIX / "node_modules" / ".bin" / "mcp-server-everything"
needs_everything = pytest.mark.skipif(
    not EVERYTHING.exists(),
    reason=f"@modelcontextprotocol/server-everything is not installed at {EVERYTHING}; "
    f"run: npm install --prefix {PREFIX} @modelcontextprotocol/server-everything",
)
CLAUDE_FLOW = PREFIX / "node_modules" / ".bin" / "claude-flow"
needs_claude_flow = pytest.mark.skipif(
    not CLAUDE_FLOW.exists(),
    reason=f"@claude-flow/cli is not installed at {CLAUDE_FLOW}; run: npm install --prefix {PREFIX} @claude-flow/cli",
)
needs_time = pytest.mark.skipif(
    importlib.util.find_spec("mcp_server_time") is None,
    reason="mcp-server-time is not installed; run: pip install mcp-server-time",
)
needs_git = pytest.mark.skipif(
    importlib.util.find_spec("mcp_server_git") is None,
    reason="mcp-server-git is not installed; run: pip install mcp-server-git",
)


def everything(mode: str = "auto") -> ServerConfig:
    # Its start (a Node process) is the event its deadline waits for: generous, for a loaded machine.
    return StdioServer(
        command=str(EVERYTHING), args=("stdio",), protocol=mode, internal_only=False, timeout=CHILD_SECONDS
    ).with_name("everything")


def everything_entry(**fields: object) -> dict[str, object]:
    """server-everything as a config file's server entry, with ``fields`` (camelCase, as written)."""
    return {"command": str(EVERYTHING), "args": ["stdio"], "timeout": CHILD_SECONDS, **fields}


async def registered(registry: ToolRegistry, *names: str) -> None:
    """Wait until every one of ``names`` is registered; only the hang guard limits it.

    server-everything adds some tools (``simulate-research-query``, the ones that ask the client something)
    once the client has said it is initialized, and announces them with ``tools/list_changed``: the first
    listing may come before them, the next one has them.
    """
    arrived = anyio.Event()

    def watch(_change: object) -> None:
        if all(name in registry for name in names):
            arrived.set()

    unsubscribe = registry.subscribe(watch)
    try:
        if not all(name in registry for name in names):
            await arrived.wait()
    finally:
        unsubscribe()
