"""Record the tool lists the search evaluation ranks over, so that it runs offline.

Run once (needs npm for the claude-flow server)::

    npm install --prefix .interop @claude-flow/cli @modelcontextprotocol/server-everything
    pip install mcp-server-time mcp-server-git
    python benchmarks/record_catalog.py            # every server
    python benchmarks/record_catalog.py git time   # only these; the others stay as recorded

Each server is started over stdio and listed through toolsift's own
``McpSession``: the real claude-flow server (``claude-flow mcp start``), the
example ``flow`` and ``general`` servers, and, when installed, server-everything
and the reference ``time`` and ``git`` servers from PyPI. Names, titles,
descriptions, input schemas and annotations go to
``benchmarks/fixtures/tool_catalog.json``; ``_search_eval.py`` reads that file.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio

from toolsift.config import ServerConfig, StdioServer
from toolsift.mcp_sessions import McpSession

ROOT = Path(__file__).resolve().parent.parent
PREFIX = Path(os.environ.get("TOOLSIFT_INTEROP_DIR", ROOT / ".interop"))
BIN = PREFIX / "node_modules" / ".bin"
CATALOG = Path(__file__).resolve().parent / "fixtures" / "tool_catalog.json"


def servers() -> list[ServerConfig]:
    """The servers to list; npm ones only when installed."""
    examples = ROOT / "examples" / "servers"
    configs = [
        StdioServer(command=sys.executable, args=(str(examples / "flow.py"),)).with_name("flow"),
        StdioServer(command=sys.executable, args=(str(examples / "general.py"),)).with_name("general"),
    ]
    if (BIN / "claude-flow").exists():
        configs.insert(
            0,
            StdioServer(
                command=str(BIN / "claude-flow"), args=("mcp", "start"), protocol="legacy", timeout=120
            ).with_name("claude-flow"),
        )
    else:
        print(f"claude-flow is not installed under {PREFIX}; run: npm install --prefix {PREFIX} @claude-flow/cli")
    if (BIN / "mcp-server-everything").exists():
        configs.append(
            StdioServer(
                command=str(BIN / "mcp-server-everything"), args=("stdio",), protocol="legacy", timeout=60
            ).with_name("everything")
        )
    for name, command in (("time", "mcp-server-time"), ("git", "mcp-server-git")):
        found = shutil.which(command, path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        if found:
            configs.append(StdioServer(command=found, protocol="legacy", timeout=60).with_name(name))
        else:
            print(f"{command} is not installed; run: pip install {command}")
    return configs


async def listing(config: ServerConfig) -> list[dict[str, Any]]:
    """Every tool the server lists, as MCP JSON."""
    async with McpSession(config) as session:
        return [
            tool.model_dump(
                mode="json",
                by_alias=True,
                exclude_none=True,
                include={"name", "title", "description", "input_schema", "annotations"},
            )
            for tool in session.catalog.tools
        ]


async def main(only: list[str]) -> None:
    kept = json.loads(CATALOG.read_text())["servers"] if only and CATALOG.exists() else {}
    recorded: dict[str, list[dict[str, Any]]] = dict(kept)
    for config in servers():
        if only and config.name not in only:
            continue
        recorded[config.name] = await listing(config)
        print(f"{config.name}: {len(recorded[config.name])} tools")
    CATALOG.parent.mkdir(exist_ok=True)
    CATALOG.write_text(json.dumps({"servers": recorded}, indent=1, ensure_ascii=False) + "\n")
    print(f"saved {CATALOG.relative_to(ROOT)}")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
