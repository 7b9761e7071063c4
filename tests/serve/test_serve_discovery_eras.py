"""Tool discovery through the gateway in both MCP eras, with the SDK client over real HTTP.

A 2026-07-28 client (``mode="auto"``) gets a list that depends only on the
endpoint: what a search or a skill finds runs through ``call_tool``. A
2025-11-25 client (``mode="legacy"``) gets tools added to its own list.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.client.session import IncomingMessage
from mcp_helpers import example_server, in_memory_everywhere
from serve_project import general_server, served_http, text, write_project, write_skill

from toolsift import ConfigError
from toolsift.serve import build_server


@pytest.fixture
def servers_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The upstream servers (``general.py`` as ``general`` and ``hidden``) run in this process, for tests of what
    each era's client is offered. A test that follows a call's progress keeps the child process."""
    in_memory_everywhere(monkeypatch, {"general": example_server("general.py"), "hidden": example_server("general.py")})


BUILTINS = ["builtin__read_file", "builtin__write_file", "builtin__list_directory", "builtin__exec_shell"]
OPS_SKILL = """\
---
name: ops
description: Add numbers for operations.
allowed-tools: read_file, general__add
---
Add what you are given.
"""


def internal_project(
    tmp_path: Path, *, searchable: bool = True, serve: dict[str, Any] | None = None, **fields: Any
) -> Path:
    """A project whose ``general`` server is internal (only a search or a skill reaches it), with skill ``ops``."""
    write_skill(tmp_path, "ops", OPS_SKILL)
    servers = {"general": general_server(internalOnly=True, searchable=searchable)}
    return write_project(tmp_path, serve={"gateway": True, **(serve or {})}, servers=servers, **fields)


def names(listed: types.ListToolsResult) -> list[str]:
    return [tool.name for tool in listed.tools]


def audited(project: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (project / "audit.jsonl").read_text().splitlines()]


async def test_modern_search_answers_with_schemas_and_call_tool_runs_what_it_found(tmp_path: Path) -> None:
    config = internal_project(tmp_path)
    steps: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        steps.append(done)

    async with served_http(config) as (url, _), Client(url) as client:
        assert client.protocol_version == "2026-07-28"
        found = await client.call_tool("search_tools", {"query": "add two integers"})
        payload = found.structured_content
        assert payload is not None and "unlocked" not in payload
        add = next(tool for tool in payload["tools"] if tool["name"] == "general__add")
        assert add["run_with"] == "call_tool"
        assert add["input_schema"]["properties"].keys() == {"a", "b"}
        assert "run one with call_tool" in payload["note"]
        assert "tool list from your next step" not in text(found)
        only_unlock = await client.call_tool("search_tools", {"unlock": ["general__add"]})
        assert only_unlock.structured_content is not None and "unlocked" not in only_unlock.structured_content
        assert only_unlock.structured_content["note"].startswith("Nothing is added to your tool list")
        added = await client.call_tool("call_tool", {"name": "general__add", "arguments": {"a": 2, "b": 3}})
        assert added.structured_content == {"result": 5}
        # Errors, progress and audit are those of a direct call.
        failed = await client.call_tool("call_tool", {"name": "general__fail", "arguments": {"message": "disk full"}})
        assert failed.is_error
        assert text(failed) == "Error executing tool fail: disk full"
        counted = await client.call_tool(
            "call_tool", {"name": "general__progress", "arguments": {"steps": 3}}, progress_callback=progress
        )
        assert "done 3 steps" in text(counted)
        assert steps == [1, 2, 3]
        wrong = await client.call_tool("call_tool", {"name": "general__add", "arguments": {"a": "two", "b": 3}})
        assert text(wrong).startswith("Invalid arguments for tool 'general__add'")
        bad = await client.call_tool("call_tool", {"arguments": {}})
        assert text(bad) == "Invalid arguments for tool 'call_tool': arguments: 'name' is a required property"
    assert [record["tool"] for record in audited(tmp_path)][-4:] == [
        "general__add",
        "general__fail",
        "general__progress",
        "general__add",
    ]


@pytest.mark.usefixtures("servers_in_process")
async def test_modern_tool_list_is_the_same_for_every_connection_and_after_a_search(tmp_path: Path) -> None:
    config = internal_project(tmp_path)
    async with served_http(config) as (url, _), Client(url) as one, Client(url) as other:
        first = await one.list_tools(cache_mode="bypass")
        assert names(first) == [*BUILTINS, "skill__ops", "skill__review", "search_tools", "call_tool"]
        assert (first.ttl_ms, first.cache_scope) == (0, "public")
        search = next(tool for tool in first.tools if tool.name == "search_tools")
        assert search.description is not None and "call_tool" in search.description
        assert "added to your tools" not in search.description
        await one.call_tool("search_tools", {"query": "add two integers"})
        await one.call_tool("skill__ops", {})
        again = await one.list_tools(cache_mode="bypass")
        elsewhere = await other.list_tools(cache_mode="bypass")
        assert again.model_dump() == first.model_dump() == elsewhere.model_dump()


@pytest.mark.usefixtures("servers_in_process")
async def test_modern_call_tool_refuses_what_search_cannot_find_with_the_layers_reason(tmp_path: Path) -> None:
    write_skill(tmp_path, "ops", OPS_SKILL)
    servers = {
        "general": general_server(internalOnly=True),
        "hidden": general_server(internalOnly=True, searchable=False),
    }
    agents = {
        "default": {"allowedTools": ["search_tools", "general__echo", "hidden__*"], "permissions": {"level": "execute"}}
    }
    config = write_project(tmp_path, serve={"gateway": True}, servers=servers, agents=agents)
    async with served_http(config) as (url, _), Client(url) as client:
        echoed = await client.call_tool("call_tool", {"name": "general__echo", "arguments": {"text": "found"}})
        assert text(echoed) == "found"
        unsearchable = await client.call_tool("call_tool", {"name": "hidden__echo", "arguments": {"text": "x"}})
        assert unsearchable.is_error
        assert "denied at layer 1 (internal_only)" in text(unsearchable)
        outside = await client.call_tool("call_tool", {"name": "general__add", "arguments": {"a": 1, "b": 1}})
        assert outside.is_error
        assert "denied at layer 3" in text(outside)
        unknown = await client.call_tool("call_tool", {"name": "general__add", "arguments": {}, "skill": "nope"})
        assert text(unknown) == "No skill 'nope' to run 'general__add' with; the skills here: 'ops', 'review'"


@pytest.mark.usefixtures("servers_in_process")
async def test_skill_and_agent_endpoints_serve_their_scope_and_404s_name_what_is_served(tmp_path: Path) -> None:
    agents = {
        "default": {"permissions": {"level": "execute"}},
        "ci": {"allowedTools": ["read_file", "general__*"], "permissions": {"level": "read"}},
    }
    config = internal_project(tmp_path, searchable=False, agents=agents, serve={"profiles": ["ci"]})
    async with served_http(config) as (url, _):
        async with Client(f"{url}/skills/ops") as client:
            # call_tool: skill review reaches general__echo, which this endpoint does not list.
            assert names(await client.list_tools()) == [
                "builtin__read_file",
                "skill__ops",
                "skill__review",
                "general__add",
                "call_tool",
            ]
            added = await client.call_tool("general__add", {"a": 1, "b": 2})
            assert added.structured_content == {"result": 3}
            refused = await client.call_tool("builtin__write_file", {"path": "a", "content": "b"})
            assert "denied at layer 4 (skill allowed-tools): not in skill 'ops' allowed-tools" in text(refused)
        async with Client(f"{url}/agents/ci", mode="legacy") as client:
            assert names(await client.list_tools()) == ["builtin__read_file", "skill__ops", "skill__review"]
            assert "denied at layer 3" in text(await client.call_tool("builtin__write_file", {"path": "a"}))
        async with httpx2.AsyncClient() as http:
            skill = await http.post(f"{url}/skills/nope", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            agent = await http.post(f"{url}/agents/nope", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            # A configured profile that serve.profiles does not name is not served: it may be broader.
            unnamed = await http.post(f"{url}/agents/default", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert skill.status_code == agent.status_code == unnamed.status_code == 404
    assert skill.json()["error"]["message"] == "No skill 'nope' here: /mcp/skills/<name> serves 'ops', 'review'"
    assert agent.json()["error"]["message"] == "No agent profile 'nope' here: /mcp/agents/<name> serves 'ci'"


@pytest.mark.usefixtures("servers_in_process")
async def test_modern_skill_call_puts_its_tools_in_reach_through_call_tool(tmp_path: Path) -> None:
    config = internal_project(tmp_path, searchable=False)
    async with served_http(config) as (url, _), Client(url) as client:
        listed = names(await client.list_tools())
        assert listed == [*BUILTINS, "skill__ops", "skill__review", "call_tool"]  # no search: nothing to find
        before = await client.call_tool("call_tool", {"name": "general__add", "arguments": {"a": 1, "b": 1}})
        assert "denied at layer 1 (internal_only)" in text(before)
        answer = await client.call_tool("skill__ops", {})
        assert answer.structured_content is not None
        assert answer.structured_content["tools"] == ["builtin__read_file", "general__add"]
        assert answer.structured_content["run_with"] == {"tool": "call_tool", "skill": "ops"}
        assert answer.structured_content["endpoint"] == "/mcp/skills/ops"
        assert '"skill": "ops"' in text(answer)
        added = await client.call_tool(
            "call_tool", {"name": "general__add", "arguments": {"a": 2, "b": 2}, "skill": "ops"}
        )
        assert added.structured_content == {"result": 4}
        # The skill's scope is its allowed-tools: it reaches nothing else.
        echo = await client.call_tool(
            "call_tool", {"name": "general__echo", "arguments": {"text": "x"}, "skill": "ops"}
        )
        assert "denied at layer 1" in text(echo) or "denied at layer 4" in text(echo)
        assert names(await client.list_tools()) == listed


@pytest.mark.usefixtures("servers_in_process")
async def test_legacy_skill_call_adds_its_tools_to_that_clients_list(tmp_path: Path) -> None:
    config = internal_project(tmp_path, searchable=False)
    changed = anyio.Event()

    async def notice(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with (
        served_http(config) as (url, _),
        Client(url, mode="legacy", message_handler=notice) as one,
        Client(url, mode="legacy") as other,
    ):
        assert names(await one.list_tools()) == [*BUILTINS, "skill__ops", "skill__review"]
        answer = await one.call_tool("skill__ops", {})
        assert "Its tools are in your tool list from your next step on." in text(answer)
        assert answer.structured_content is not None and "run_with" not in answer.structured_content
        await changed.wait()
        assert names(await one.list_tools())[-1] == "general__add"
        assert (await one.call_tool("general__add", {"a": 2, "b": 5})).structured_content == {"result": 7}
        # Another client called no skill: its list and reach are as before.
        assert "general__add" not in names(await other.list_tools())
        assert "denied at layer 1" in text(await other.call_tool("general__add", {"a": 1, "b": 1}))
        assert "call_tool" not in names(await other.list_tools())


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.usefixtures("servers_in_process")
async def test_skill_endpoint_lists_the_skills_tools_in_both_eras(tmp_path: Path, mode: str) -> None:
    config = internal_project(tmp_path)
    async with served_http(config) as (url, _), Client(f"{url}/skills/ops", mode=mode) as client:
        listed = names(await client.list_tools())
        await client.call_tool("skill__ops", {})
        # Skill review's tools are outside this endpoint's scope: no client is told they were added.
        review = await client.call_tool("skill__review", {"file": "notes.txt"})
        assert "Its tools are in your tool list" not in text(review)
        assert names(await client.list_tools()) == listed
        assert (await client.call_tool("general__add", {"a": 3, "b": 3})).structured_content == {"result": 6}
    meta = ["call_tool"] if mode == "auto" else []  # a client of 2026-07-28 reaches skill review's tools with it
    assert listed == ["builtin__read_file", "skill__ops", "skill__review", "general__add", *meta]


@pytest.mark.usefixtures("servers_in_process")
async def test_modern_call_tool_asks_the_approval_a_direct_call_would(tmp_path: Path) -> None:
    agents = {"default": {"permissions": {"level": "execute", "ask": ["general__add"]}}}
    server = build_server(internal_project(tmp_path, agents=agents))
    questions: list[types.ElicitRequestParams] = []

    async def person(ctx: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        questions.append(params)
        return types.ElicitResult(action="accept", content={"approve": True})

    async with server, Client(server.sdk, elicitation_callback=person) as client:
        assert client.protocol_version == "2026-07-28"
        added = await client.call_tool("call_tool", {"name": "general__add", "arguments": {"a": 1, "b": 2}})
    assert added.structured_content == {"result": 3}
    [question] = questions
    assert question.message.startswith("Approve general__add (it matches ask rule 'general__add')")
    last = audited(tmp_path)[-1]
    assert (last["tool"], last["flags"]) == ("general__add", ["approved"])


def test_serve_profiles_must_name_configured_agents(tmp_path: Path) -> None:
    config = internal_project(tmp_path, serve={"profiles": ["ci", "nope"]})
    with pytest.raises(
        ConfigError, match=r"serve.profiles names no configured agent: 'ci', 'nope'; the agents are 'default'"
    ):
        build_server(config)
