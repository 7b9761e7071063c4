"""Through the gateway, a permission rule written with any name a client sees takes effect, and one that
matches no tool is reported when serving starts."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp_helpers import example_server, in_memory_everywhere
from serve_project import general_server, text, write_project

from toolsift.registry import Level
from toolsift.serve import build_server


@pytest.fixture(autouse=True)
def calc_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Server ``calc`` runs in this process: these tests are about names and rules, not the child process."""
    in_memory_everywhere(monkeypatch, {"calc": example_server("general.py")})


class Person:
    """Says yes to every approval and keeps the questions."""

    def __init__(self) -> None:
        self.questions: list[str] = []

    async def __call__(self, ctx: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.questions.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})


def project(folder: Path, permissions: dict[str, Any], *, prefix_names: bool = True) -> Path:
    """A gateway serving builtins and server ``calc`` (the example ``general.py``) under ``toolPrefix: math``."""
    return write_project(
        folder,
        agents={"default": {"permissions": {"level": "execute", **permissions}}},
        servers={"calc": general_server(toolPrefix="math")},
        serve={"gateway": True, "prefixNames": prefix_names},
    )


@pytest.mark.parametrize(
    ("rule", "served", "prefix_names"),
    [
        ("builtin__write_file", "builtin__write_file", True),  # the served name of a bare builtin
        ("math__add", "math__add", True),  # the toolPrefix name
        ("calc__add", "math__add", True),  # the server's key, under a toolPrefix
        ("add", "add", False),  # the server's own name, served unprefixed
        ("calc__*", "add", False),
    ],
)
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_ask_rule_written_with_a_name_the_client_sees_holds_the_call_back(
    tmp_path: Path, rule: str, served: str, prefix_names: bool, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = build_server(project(tmp_path, {"ask": [rule]}, prefix_names=prefix_names))
    person = Person()
    arguments = {"path": "out.txt", "content": "hi"} if served == "builtin__write_file" else {"a": 2, "b": 3}
    with caplog.at_level(logging.WARNING, "toolsift.config"):
        async with server, Client(server.sdk, mode=mode, elicitation_callback=person) as client:
            assert served in [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool(served, arguments)
    assert not result.is_error, text(result)
    [question] = person.questions
    assert f"it matches ask rule {rule!r}" in question
    assert "matches no tool" not in caplog.text


@pytest.mark.parametrize("rule", ["builtin__exec_shell", "exec_shell", "builtin__exec_*"])
async def test_a_denylist_rule_written_with_the_served_name_refuses_the_call(tmp_path: Path, rule: str) -> None:
    server = build_server(project(tmp_path, {"denylist": [rule]}))
    async with server, Client(server.sdk, mode="legacy") as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool("builtin__exec_shell", {"command": "echo hi"})
    assert "builtin__exec_shell" not in listed and "builtin__read_file" in listed
    assert result.is_error and "it matches the caller's denylist" in text(result)


async def test_a_rule_that_matches_no_tool_is_logged_at_start_and_changes_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Prefixed serving: "add" is no name of math__add here, so the rule holds nothing back, and says so.
    config = project(tmp_path, {"ask": ["add"], "denylist": ["builtin__exec_shel"]})
    server = build_server(config)
    person = Person()
    with caplog.at_level(logging.WARNING, "toolsift.config"):
        async with server, Client(server.sdk, mode="legacy", elicitation_callback=person) as client:
            result = await client.call_tool("math__add", {"a": 2, "b": 3})
    assert text(result) == "5" and person.questions == []
    unmatched = [record.getMessage() for record in caplog.records if "matches no tool" in record.getMessage()]
    assert unmatched == [
        f"{config}: agents.default.permissions.denylist: rule 'builtin__exec_shel' matches no tool, so it has no "
        "effect; rules match a tool by its canonical name (read_file, github__create_issue), its served name "
        "(builtin__read_file), its server's key under a toolPrefix, and its provider aliases",
        f"{config}: agents.default.permissions.ask: rule 'add' matches no tool, so it has no effect; rules match "
        "a tool by its canonical name (read_file, github__create_issue), its served name (builtin__read_file), "
        "its server's key under a toolPrefix, and its provider aliases",
    ]


@pytest.mark.parametrize("match", ["add", "calc__add", "math__add"])
async def test_a_config_rule_written_with_a_served_name_raises_what_the_tool_requires(
    tmp_path: Path, match: str
) -> None:
    config = project(tmp_path, {}, prefix_names=False)
    data = json.loads(config.read_text())
    data["tools"]["permissions"] = [{"match": match, "requiredLevel": "admin"}]
    config.write_text(json.dumps(data))
    server = build_server(config)
    async with server, Client(server.sdk, mode="legacy") as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert server.registry.spec("math__add").required_level == Level.ADMIN
    assert "add" not in listed and "echo" in listed  # a profile of level execute cannot call it, so it is not listed
    assert result.is_error


@pytest.mark.parametrize("prefix_names", [True, False])
async def test_every_name_the_gateway_serves_is_a_name_rules_match_its_tool_by(
    tmp_path: Path, prefix_names: bool
) -> None:
    server = build_server(project(tmp_path, {}, prefix_names=prefix_names))
    async with server, Client(server.sdk, mode="legacy") as client:
        served = [tool.name for tool in (await client.list_tools()).tools if not tool.name.startswith("skill__")]
        names = {
            name: (route[0].registry.names(route[1]) if (route := server.tools.route(name)) else ()) for name in served
        }
    assert "builtin__write_file" in served and ("add" in served) is not prefix_names
    assert all(name in known for name, known in names.items()), names
