"""Third-party MCP servers installed for interop tests (``.ci/run`` installs them), and skip marks."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from toolsift.config import ServerConfig, StdioServer

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
    return StdioServer(
        command=str(EVERYTHING), args=("stdio",), protocol=mode, internal_only=False, timeout=20
    ).with_name("everything")
