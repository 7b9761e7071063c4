"""Interop with third-party servers: the protocol's reference server (npm), mcp-server-time and mcp-server-git (PyPI).

Install them to run these tests (``.ci/run`` does)::

    npm install --prefix .interop @modelcontextprotocol/server-everything
    pip install mcp-server-time mcp-server-git

``TOOLSIFT_INTEROP_DIR`` points at another npm prefix than ``<repo>/.interop``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mcp.types as types
import pytest
from interop_servers import everything, needs_everything, needs_git, needs_time

from toolsift.config import StdioServer
from toolsift.mcp_sessions import McpSession, register_mcp_tools
from toolsift.mcp_sessions._internal import SessionState
from toolsift.registry import ToolRegistry

pytestmark = pytest.mark.interop


@needs_everything
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_interop_everything_connects_and_lists_in_both_modes(mode: str) -> None:
    async with McpSession(everything(mode)) as session:
        assert session.state is SessionState.READY
        # A handshake-era server: auto mode falls back from the 2026-07-28 probe.
        assert session.protocol_version == "2025-11-25"
        names = {tool.name for tool in session.catalog.tools}
        assert {"echo", "get-sum", "get-tiny-image", "trigger-long-running-operation"} <= names
        assert session.catalog.resources and session.catalog.prompts
        contents = (await session.read_resource(str(session.catalog.resources[0].uri))).contents
        assert contents


@needs_everything
async def test_interop_everything_tools_through_the_registry() -> None:
    registry = ToolRegistry()
    progress: list[tuple[float, float | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    async with register_mcp_tools([everything()], registry):
        spec = registry.get("everything__get-sum").spec
        assert spec.read_only and spec.annotations is not None and spec.annotations.idempotent_hint
        echo = await registry.execute("everything__echo", {"message": "hi there"})
        assert "Echo: hi there" in echo.text_content() and "<<<UNTRUSTED TOOL RESULT" in echo.text_content()
        image = await registry.execute("everything__get-tiny-image", {})
        assert any(isinstance(block, types.ImageContent) for block in image.content)
        links = await registry.execute("everything__get-resource-links", {"count": 2})
        assert sum(isinstance(block, types.ResourceLink) for block in links.content) == 2
        weather = await registry.execute("everything__get-structured-content", {"location": "Chicago"})
        assert set(weather.structured_content) >= {"temperature", "conditions"}
        done = await registry.execute(
            "everything__trigger-long-running-operation", {"duration": 0.3, "steps": 3}, progress=on_progress
        )
        assert not done.is_error and progress == [(1, 3), (2, 3), (3, 3)]


@needs_time
async def test_interop_mcp_server_time_answers() -> None:
    config = StdioServer(
        command=sys.executable,
        args=("-m", "mcp_server_time", "--local-timezone", "UTC"),
        trust="trusted",
        internal_only=False,
    ).with_name("time")
    registry = ToolRegistry()
    async with register_mcp_tools([config], registry) as sessions:
        assert sessions["time"].state is SessionState.READY
        now = await registry.execute("time__get_current_time", {"timezone": "Europe/Paris"})
        converted = await registry.execute(
            "time__convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        )
    assert now.structured_content["timezone"] == "Europe/Paris"
    assert converted.structured_content["target"]["datetime"].endswith("T21:00:00+09:00")


@needs_git
async def test_interop_mcp_server_git_reads_a_real_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    for argv in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "first commit"]):
        subprocess.run(["git", *argv], cwd=repo, env=env, check=True)
    (repo / "notes.txt").write_text("hello\n")
    config = StdioServer(
        command=sys.executable,
        args=("-m", "mcp_server_git", "--repository", str(repo)),
        internal_only=False,
        trust="trusted",
    ).with_name("git")
    registry = ToolRegistry()
    async with register_mcp_tools([config], registry) as sessions:
        assert sessions["git"].state is SessionState.READY
        assert {"git__git_status", "git__git_log"} <= {t.spec.name for t in registry.tools(server="git")}
        status = await registry.execute("git__git_status", {"repo_path": str(repo)})
        log = await registry.execute("git__git_log", {"repo_path": str(repo), "max_count": 1})
    assert not status.is_error and "notes.txt" in status.text_content()
    assert not log.is_error and "first commit" in log.text_content()
