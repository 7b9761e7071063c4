"""What a served profile lists and may call, checked in process through the SDK's in-memory client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from serve_project import text, write_project, write_skill

from toolsift.registry import ToolResult, tool
from toolsift.serve import build_server
from toolsift.serve._server import ToolsiftServer


async def listed(server: ToolsiftServer, mode: str = "legacy") -> list[str]:
    async with server, Client(server.sdk, mode=mode) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


@pytest.mark.parametrize(
    ("agents", "names"),
    [
        ({"default": {}}, ["builtin__read_file", "builtin__write_file", "builtin__list_directory"]),
        ({"default": {"permissions": {"level": "read"}}}, ["builtin__read_file", "builtin__list_directory"]),
        (
            {"default": {"planMode": True, "permissions": {"level": "admin"}}},
            ["builtin__read_file", "builtin__list_directory"],
        ),
        (
            {"default": {"permissions": {"level": "admin", "denylist": ["*_file"]}}},
            ["builtin__list_directory", "builtin__exec_shell"],
        ),
        ({"default": {"allowedTools": ["list_*"], "permissions": {"level": "admin"}}}, ["builtin__list_directory"]),
    ],
)
async def test_served_list_follows_the_profile(tmp_path: Path, agents: dict[str, Any], names: list[str]) -> None:
    server = build_server(write_project(tmp_path, agents=agents))
    assert await listed(server) == [*names, "skill__review"]


async def test_unlisted_builtins_are_refused_with_their_layer(tmp_path: Path) -> None:
    server = build_server(write_project(tmp_path, agents={"default": {}}))
    async with server, Client(server.sdk) as client:
        result = await client.call_tool("builtin__exec_shell", {"command": "ls"})
        assert result.is_error
        assert text(result) == (
            "Tool 'exec_shell' denied at layer 5 (permission checks): it requires level execute, the caller has write"
        )


async def test_skill_tools_carry_their_variables_as_a_schema(tmp_path: Path) -> None:
    project = write_project(tmp_path)
    write_skill(
        tmp_path,
        "notes",
        "---\nname: notes\ndescription: Notes.\nvariables:\n  topic: {}\n"
        "  tone: {default: calm}\n---\n{{ topic }} in a {{ tone }} tone. {{ arguments }}\n",
    )
    server = build_server(project)
    async with server, Client(server.sdk) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        schema = tools["skill__notes"].input_schema
        assert schema["required"] == ["topic"]
        assert schema["properties"]["tone"] == {"type": "string", "default": "calm"}
        assert schema["additionalProperties"] is False
        assert tools["skill__notes"].annotations is not None and tools["skill__notes"].annotations.read_only_hint
        result = await client.call_tool("skill__notes", {"topic": "Rain", "arguments": "Be brief."})
        assert text(result) == "Rain in a calm tone. Be brief.\n\n---\nThe skill does not limit which tools to use."
        extra = await client.call_tool("skill__notes", {"topic": "x", "mood": "y"})
        assert "Additional properties are not allowed ('mood' was unexpected)" in text(extra)


async def test_skill_render_failures_are_tool_errors(tmp_path: Path) -> None:
    project = write_project(tmp_path)
    write_skill(tmp_path, "broken", "---\nname: broken\ndescription: Divides.\ntemplating: jinja\n---\n{{ 1 // 0 }}\n")
    server = build_server(project)
    async with server, Client(server.sdk) as client:
        result = await client.call_tool("skill__broken", {})
        assert result.is_error
        assert "Skill 'broken'" in text(result)
        assert "ZeroDivisionError" in text(result)


async def test_skill_naming_no_served_tool_says_so(tmp_path: Path) -> None:
    project = write_project(tmp_path)
    write_skill(tmp_path, "gh", "---\nname: gh\ndescription: GitHub.\nallowed-tools: github__*\n---\nUse GitHub.\n")
    server = build_server(project)
    async with server, Client(server.sdk) as client:
        result = await client.call_tool("skill__gh", {})
        assert text(result).endswith(
            "None of the tools this server offers match the skill's allowed-tools (github__*)."
        )


async def test_skills_can_be_left_unserved(tmp_path: Path) -> None:
    server = build_server(write_project(tmp_path), skills=False, watch_skills=False)
    assert await listed(server, mode="auto") == [
        "builtin__read_file",
        "builtin__write_file",
        "builtin__list_directory",
        "builtin__exec_shell",
    ]


async def test_server_is_entered_once(tmp_path: Path) -> None:
    server = build_server(write_project(tmp_path), watch_skills=False)
    async with server:
        assert "profile='default'" in repr(server)
    with pytest.raises(RuntimeError, match="A ToolsiftServer can be entered once"):
        async with server:
            pass


async def test_internal_errors_still_answer_with_a_tool_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    server = build_server(write_project(tmp_path), watch_skills=False)

    def explode(*args: object, **kwargs: object) -> ToolResult:
        raise KeyError("boom")

    monkeypatch.setattr(server.tools, "record", explode)
    async with server, Client(server.sdk) as client:
        result = await client.call_tool("builtin__read_file", {"path": "notes.txt"})
        assert result.is_error
        assert text(result) == "Tool 'builtin__read_file' failed with an internal error; see the server log"
    assert "serving a call of 'builtin__read_file' failed" in caplog.text


async def test_gateway_scope_follows_edits_of_its_skill(tmp_path: Path) -> None:
    project = write_project(tmp_path)
    gateway_skill = "---\nname: ops\ndescription: Ops.\nallowed-tools: {}\n---\nOperate.\n"
    write_skill(tmp_path, "ops", gateway_skill.format("box__start"))
    server = build_server(project, gateway="ops", watch_skills=False)
    server.registry.register_many(
        [tool(lambda: "started", name="box__start"), tool(lambda: "stopped", name="box__stop")]
    )
    async with server, Client(server.sdk) as client:
        assert [t.name for t in (await client.list_tools()).tools][-1:] == ["box__start"]
        write_skill(tmp_path, "ops", gateway_skill.format("box__stop"))
        server.skills.reload()
        assert [t.name for t in (await client.list_tools()).tools][-1:] == ["box__stop"]
        assert "denied at layer 4" in text(await client.call_tool("box__start", {}))
        assert text(await client.call_tool("box__stop", {})) == "stopped"


def test_routing_takes_only_served_names(tmp_path: Path) -> None:
    server = build_server(write_project(tmp_path), watch_skills=False)
    assert server.tools.route("builtin__read_file") is not None
    for name in ("read_file", "builtin__nope", "builtin__x__y", "skill__nope", "general__echo", "builtin__"):
        assert server.tools.route(name) is None, name


async def test_a_served_call_is_routed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = build_server(write_project(tmp_path))
    routed: list[str] = []
    route = server.tools.route

    def counting(name: str, gateway: Any = None) -> Any:
        routed.append(name)
        return route(name, gateway)

    monkeypatch.setattr(server.tools, "route", counting)
    async with server, Client(server.sdk) as client:
        result = await client.call_tool("builtin__list_directory", {"path": "."})
        assert not result.is_error
    assert routed == ["builtin__list_directory"]
