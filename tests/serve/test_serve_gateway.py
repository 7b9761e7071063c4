"""Gateway mode: MCP tools of configured servers, served under ``server__tool`` and narrowed by profile and skill."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.session import IncomingMessage
from serve_project import general_server, served_http, stdio_params, text, write_project

from toolsift import ConfigError
from toolsift.serve import build_server

BUILTINS = ["builtin__read_file", "builtin__write_file", "builtin__list_directory", "builtin__exec_shell"]


async def test_serve_gateway_over_stdio_calls_a_real_mcp_server(tmp_path: Path) -> None:
    config = write_project(tmp_path, serve={"gateway": True}, servers={"general": general_server()})
    steps: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        steps.append(done)

    async with Client(stdio_params(config), mode="legacy") as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names[:5] == [*BUILTINS, "skill__review"]
        assert {"general__echo", "general__add", "general__progress"} <= set(names[5:])
        echoed = await client.call_tool("general__echo", {"text": "through the gateway"})
        assert not echoed.is_error
        # Fences are for models: an MCP client gets the server's result as it was.
        assert text(echoed) == "through the gateway"
        assert echoed.structured_content == {"result": "through the gateway"}
        added = await client.call_tool("general__add", {"a": 2, "b": 3})
        assert added.structured_content == {"result": 5}
        failed = await client.call_tool("general__fail", {"message": "disk full"})
        assert failed.is_error
        assert text(failed) == "Error executing tool fail: disk full"  # the server's words, no header
        counted = await client.call_tool("general__progress", {"steps": 3}, progress_callback=progress)
        assert "done 3 steps" in text(counted)
        assert steps == [1, 2, 3]
        wrong = await client.call_tool("general__add", {"a": "two", "b": 3})
        assert text(wrong).startswith("Invalid arguments for tool 'general__add'")
        review = await client.call_tool("skill__review", {"file": "notes.txt"})
        assert review.structured_content["tools"] == ["builtin__read_file", "builtin__list_directory", "general__echo"]


@pytest.mark.usefixtures("examples_in_process")
async def test_serve_gateway_narrowed_by_a_skill(tmp_path: Path) -> None:
    config = write_project(tmp_path, serve={"gateway": "review"}, servers={"general": general_server()})
    async with served_http(config) as (url, _), Client(url) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names == [*BUILTINS, "skill__review", "general__echo"]
        assert "hi" in text(await client.call_tool("general__echo", {"text": "hi"}))
        hidden = await client.call_tool("general__add", {"a": 1, "b": 2})
        assert hidden.is_error
        assert "denied at layer 4 (skill allowed-tools): not in skill 'review' allowed-tools" in text(hidden)
        # builtin__ cannot be used to reach around the gateway's scope.
        assert text(await client.call_tool("builtin__general__add", {"a": 1, "b": 2})).startswith("Unknown tool")


@pytest.mark.usefixtures("examples_in_process")
async def test_serve_gateway_patterns_surface_internal_servers_named_literally(tmp_path: Path) -> None:
    servers = {"general": general_server(internalOnly=True)}
    config = write_project(tmp_path, serve={"gateway": ["general__add", "read_file"]}, servers=servers)
    async with served_http(config) as (url, _), Client(url) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names == [*BUILTINS, "skill__review", "general__add"]
        assert (await client.call_tool("general__add", {"a": 1, "b": 1})).structured_content == {"result": 2}


@pytest.mark.usefixtures("examples_in_process")
async def test_serve_gateway_hides_internal_servers_by_default(tmp_path: Path) -> None:
    config = write_project(tmp_path, serve={"gateway": True}, servers={"general": general_server(internalOnly=True)})
    async with served_http(config) as (url, _), Client(url) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        # search reaches the internal tools; a client of 2026-07-28 runs what it finds with call_tool
        assert names == [*BUILTINS, "skill__review", "search_tools", "call_tool"]
        hidden = await client.call_tool("general__echo", {"text": "x"})
        assert "denied at layer 1 (internal_only)" in text(hidden)


@pytest.mark.usefixtures("examples_in_process")
async def test_serve_gateway_search_unlocks_internal_tools_for_the_client_that_searched(tmp_path: Path) -> None:
    config = write_project(tmp_path, serve={"gateway": True}, servers={"general": general_server(internalOnly=True)})
    changed = anyio.Event()

    async def notice(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with (
        served_http(config) as (url, _),
        Client(url, mode="legacy", message_handler=notice) as one,
        Client(url, mode="legacy") as other,
    ):
        found = await one.call_tool("search_tools", {"query": "add two integers"})
        assert found.structured_content["unlocked"] == ["general__add"]
        await changed.wait()
        assert "general__add" in [tool.name for tool in (await one.list_tools()).tools]
        assert (await one.call_tool("general__add", {"a": 2, "b": 2})).structured_content == {"result": 4}
        # The other client searched nothing: it sees and may call what it saw before.
        assert "general__add" not in [tool.name for tool in (await other.list_tools()).tools]
        assert "denied at layer 1" in text(await other.call_tool("general__add", {"a": 2, "b": 2}))


@pytest.mark.usefixtures("examples_in_process")
async def test_serve_gateway_offers_no_search_when_the_profile_says_skills(tmp_path: Path) -> None:
    agents = {"default": {"toolDiscovery": "skills", "permissions": {"level": "execute"}}}
    config = write_project(
        tmp_path, serve={"gateway": True}, agents=agents, servers={"general": general_server(internalOnly=True)}
    )
    async with served_http(config) as (url, _), Client(url) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert "search_tools" not in names


@pytest.mark.usefixtures("examples_in_process")
async def test_serve_gateway_follows_the_profile_and_argument_policies(tmp_path: Path) -> None:
    agents = {"ci": {"allowedTools": ["read_file", "general__echo"], "permissions": {"level": "read"}}}
    serve = {"gateway": True, "profile": "ci", "argumentPolicies": {"general__*": {"text": {"denied": ["*password*"]}}}}
    config = write_project(tmp_path, serve=serve, agents=agents, servers={"general": general_server()})
    async with served_http(config) as (url, _), Client(url) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names == ["builtin__read_file", "skill__review", "general__echo"]
        refused = await client.call_tool("general__echo", {"text": "my password is hunter2"})
        assert "refused by the argument policy: argument 'text'" in text(refused)
        assert "denied at layer 3" in text(await client.call_tool("builtin__write_file", {"path": "a", "content": "b"}))


@pytest.mark.usefixtures("examples_in_process")
async def test_serve_gateway_applies_config_edits_and_tells_the_client(tmp_path: Path) -> None:
    config = write_project(tmp_path, serve={"gateway": True})
    heard = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard.set()

    async with served_http(config) as (url, _), Client(url, mode="legacy", message_handler=on_message) as client:
        before = [tool.name for tool in (await client.list_tools()).tools]
        assert before == [*BUILTINS, "skill__review"]
        data = json.loads(config.read_text())
        data["tools"] = {"mcpServers": {"general": general_server()}}
        edited = config.with_name(".toolsift.json.tmp")
        edited.write_text(json.dumps(data))
        os.replace(edited, config)  # as editors save
        await heard.wait()
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert {"general__echo", "general__add"} <= set(names)
        assert "from the edit" in text(await client.call_tool("general__echo", {"text": "from the edit"}))


def test_serve_gateway_refuses_servers_named_like_toolsift_namespaces(tmp_path: Path) -> None:
    config = write_project(tmp_path, serve={"gateway": True}, servers={"skill": general_server()})
    with pytest.raises(ConfigError, match="gateway mode cannot serve MCP servers named 'skill'"):
        build_server(config)
