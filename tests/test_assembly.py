"""The composition root: one assembly of a config's parts, for the toolbox and the server alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolsift._assembly import Assembly
from toolsift.config import parse_config
from toolsift.config._internal import ServeSettings
from toolsift.serve._server import ToolsiftServer
from toolsift.toolbox import Toolbox


def config_with_servers(tmp_path: Path) -> dict[str, object]:
    # Lazy servers: an assembly that runs them starts none, so no process is needed here.
    server = {"command": "unused-in-this-test", "lazy": True}
    return {
        "tools": {"mcpServers": {"notes": server, "vault": {**server, "searchable": False}}},
        "workspace": str(tmp_path),
    }


def test_an_assembly_without_servers_has_no_sessions(tmp_path: Path) -> None:
    parts = Assembly(parse_config(config_with_servers(tmp_path)), servers=False)
    assert parts.manager is None
    with pytest.raises(RuntimeError, match="runs no MCP servers: it was built with servers=False"):
        _ = parts.sessions
    assert parts.unsearchable() == {"vault"}  # from the config, when no manager follows reloads


async def test_search_tools_joins_the_registry_while_the_assembly_runs(tmp_path: Path) -> None:
    parts = Assembly(parse_config(config_with_servers(tmp_path)))
    assert "search_tools" not in parts.registry
    async with parts.running():
        assert parts.registry.is_internal("search_tools")
        assert parts.unsearchable() == {"vault"}


def test_an_assembly_without_search_offers_none(tmp_path: Path) -> None:
    parts = Assembly(parse_config(config_with_servers(tmp_path)), search=False)
    assert parts.index is None


def test_the_toolbox_and_the_server_hold_what_one_assembly_built(tmp_path: Path) -> None:
    config = parse_config(config_with_servers(tmp_path))
    box = Toolbox(config)
    assert (box.registry, box.skills, box.manager) == (box.parts.registry, box.parts.skills, box.parts.manager)
    server = ToolsiftServer(config, ServeSettings(gateway=True))
    assert (server.registry, server.skills, server.sessions, server.index) == (
        server.parts.registry,
        server.parts.skills,
        server.parts.manager,
        server.parts.index,
    )
    assert server.index is not None and server.parts.catalog is not None
    builtins_only = ToolsiftServer(config, ServeSettings(gateway=False))
    assert builtins_only.sessions is None and builtins_only.index is None
