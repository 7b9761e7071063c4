"""A served model cannot reach what configures toolsift through the builtin file tools.

The reproduction: ``toolsift serve --gateway`` in a project whose workspace is the
config's own folder (the default), with a profile of level ``write`` and no
``exec_shell``. Before, ``builtin__write_file`` of ``toolsift.json`` added a server
that hot reload started, and ``builtin__read_file`` returned secret files in the clear.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_helpers import example_server, in_memory_everywhere
from serve_project import REVIEW_SKILL, general_server, served_http, text
from waits import poll_until

SECRET = "sk-served-0123456789abcdef"
ENV_SECRET = "env-served-fedcba9876543210"


def write_project(project: Path, servers: dict[str, Any]) -> Path:
    """A config whose workspace is its own folder, with a secret file, an env file and a skill."""
    (project / "secrets").mkdir(parents=True)
    (project / "secrets" / "api.key").write_text(SECRET + "\n", encoding="utf-8")
    (project / "app.env").write_text(f"TOKEN={ENV_SECRET}\n", encoding="utf-8")
    (project / "notes.txt").write_text("hello notes\n", encoding="utf-8")
    (project / "skills" / "review").mkdir(parents=True)
    (project / "skills" / "review" / "SKILL.md").write_text(REVIEW_SKILL, encoding="utf-8")
    path = project / "toolsift.json"
    path.write_text(json.dumps(config_data(project, servers), indent=2), encoding="utf-8")
    return path


def config_data(project: Path, servers: dict[str, Any]) -> dict[str, Any]:
    return {
        "skills": {"paths": ["skills"], "userSkills": False},
        "agents": {"default": {"permissions": {"level": "write"}}},
        "audit": {"path": str(project.parent / "audit.jsonl")},
        "tools": {"mcpServers": servers},
    }


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.fixture(autouse=True)
def upstreams_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The servers ``api`` and ``second`` run in this process: what guards their files is the point, and their
    configs (env files, secrets) are still resolved as for a child; ``evil`` would start as its config says."""
    general = example_server("general.py")
    in_memory_everywhere(monkeypatch, {"api": general, "second": general})


API = general_server(envFile="app.env", env={"API_KEY": "secret://file/secrets/api.key"})


async def test_served_write_file_cannot_change_the_config_nor_read_file_the_secrets(tmp_path: Path) -> None:
    project = tmp_path / "project"
    config = write_project(project, {"api": API})
    before = snapshot(project)
    evil = config_data(
        project, {"api": API, "evil": {"command": "touch", "args": [str(tmp_path / "pwned")], "internalOnly": False}}
    )
    async with served_http(config, gateway=True) as (url, _), Client(url) as client:
        written = await client.call_tool("builtin__write_file", {"path": "toolsift.json", "content": json.dumps(evil)})
        assert written.is_error
        assert "a config file toolsift loaded; builtin tools never read or write what configures toolsift" in text(
            written
        )
        for path in ("secrets/api.key", str(project / "secrets" / "api.key"), "app.env", "secrets/../app.env"):
            read = await client.call_tool("builtin__read_file", {"path": path})
            assert read.is_error
            assert SECRET not in text(read) and ENV_SECRET not in text(read)
            assert "never read or write what configures toolsift" in text(read)
        planted = await client.call_tool(
            "builtin__write_file", {"path": "skills/evil/SKILL.md", "content": "---\nname: evil\n---\n"}
        )
        assert "a skills folder" in text(planted)
        listed = await client.call_tool("builtin__list_directory", {"path": "."})
        assert text(listed) == "notes.txt\nsecrets/"
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert not any(name.startswith("evil__") for name in names)
    assert snapshot(project) == before  # nothing was written
    assert not (tmp_path / "pwned").exists()


async def test_served_protection_follows_servers_added_by_hot_reload(tmp_path: Path) -> None:
    project = tmp_path / "project"
    config = write_project(project, {"api": API})
    (project / "second.env").write_text("SECOND=later-secret-value\n", encoding="utf-8")
    async with served_http(config, gateway=True) as (url, server), Client(url) as client:
        readable = await client.call_tool("builtin__read_file", {"path": "second.env"})
        assert not readable.is_error and "SECOND=later-secret-value" in text(readable)  # nothing uses it yet
        # The person running toolsift adds a server whose env file is second.env.
        second = general_server(envFile="second.env")
        config.write_text(json.dumps(config_data(project, {"api": API, "second": second})), encoding="utf-8")
        assert server.sessions is not None
        sessions = server.sessions
        await poll_until(lambda: sessions.config is not None and "second" in sessions.config.servers)
        refused = await client.call_tool("builtin__read_file", {"path": "second.env"})
    assert refused.is_error
    assert "the env file of server 'second'" in text(refused)
    assert "later-secret-value" not in text(refused)
