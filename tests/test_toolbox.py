"""The Toolbox facade and full agent turns against real example servers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from scripted_model import ScriptedModel

from toolsift import ConfigError
from toolsift.agent import AssistantMessage, ToolCall
from toolsift.toolbox import Toolbox, find_config

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "examples" / "servers"


def config_file(folder: Path, **agents: object) -> Path:
    data = {
        "tools": {"mcpServers": {
            "claude-flow": {"command": sys.executable, "args": [str(SERVERS / "flow.py")]},
            "general": {"command": sys.executable, "args": [str(SERVERS / "general.py")], "internalOnly": False,
                        "resources": True, "resourceFilter": ["docs://readme"]},
        }},
        "agents": agents,
        "skills": {"paths": [str(ROOT / "examples" / "skills")], "userSkills": False},
    }
    path = folder / "toolsift.json"
    path.write_text(json.dumps(data))
    return path


def names(tools: list[dict[str, object]]) -> list[str]:
    return [t["function"]["name"] for t in tools]  # type: ignore[index]


async def test_use_schemas_call_and_result_through_a_real_server(tmp_path: Path) -> None:
    async with Toolbox.from_config(config_file(tmp_path)) as box:
        chat = box.conversation()
        reply = await chat.handle_command("/use flow-memory the release date")
        assert reply is not None and reply.ok
        turn = chat.turn("openai")
        assert names(turn.tools) and all(n.startswith("claude-flow__memory_") for n in names(turn.tools))
        assert "the release date" in turn.instructions
        model = ScriptedModel(
            AssistantMessage(tool_calls=(ToolCall("1", "claude-flow__memory_store",
                                                  {"key": "release", "value": "2026-12-01"}),
                                         ToolCall("2", "general__echo", {"text": "out of scope"}))),
            AssistantMessage(tool_calls=(ToolCall("3", "claude-flow__memory_retrieve", {"key": "release"}),)),
            AssistantMessage(text="Stored and read back."),
        )
        answer = await chat.send("remember it", model)
        stored, denied, retrieved = answer.tool_calls
        assert not stored.result.is_error and '"stored": true' in stored.result.text_content()
        assert denied.result.is_error and "layer 4" in denied.result.text_content()
        assert "2026-12-01" in retrieved.result.text_content()
        assert answer.text == "Stored and read back."
        assert "docs://readme" in model.seen[0][0]  # resources of `resources: true` servers are in the instructions


async def test_search_mode_unlocks_internal_tools_on_demand(tmp_path: Path) -> None:
    path = config_file(tmp_path, finder={"toolDiscovery": "search"}, plain={})
    async with Toolbox.from_config(path) as box:
        plain = box.conversation("plain")
        assert "search_tools" not in names(plain.turn().tools)
        chat = box.conversation("finder")
        first = names(chat.turn().tools)
        assert "search_tools" in first and not any(n.startswith("claude-flow__") for n in first)
        model = ScriptedModel(
            AssistantMessage(tool_calls=(ToolCall("s", "search_tools", {"query": "store a value in memory"}),)),
            AssistantMessage(tool_calls=(ToolCall("m", "claude-flow__memory_store", {"key": "k", "value": "v"}),)),
            AssistantMessage(text="done"),
        )
        reply = await chat.send("save k=v", model)
        assert reply.text == "done"
        search_result, store = reply.tool_calls
        assert "claude-flow__memory_store" in search_result.result.text_content()
        assert not store.result.is_error
        second_round_tools = names(model.seen[1][2])
        assert "claude-flow__memory_store" in second_round_tools and len(second_round_tools) < 40
        await chat.send("next message", ScriptedModel(AssistantMessage(text="ok")))
        assert "claude-flow__memory_store" not in names(chat.turn().tools)  # unlock lasts one turn by default


async def test_server_prompts_are_skills(tmp_path: Path) -> None:
    async with Toolbox.from_config(config_file(tmp_path)) as box:
        chat = box.conversation()
        reply = await chat.handle_command("/use general__review code=print(1)")
        assert reply is not None and reply.ok, reply
        assert "print(1)" in chat.turn().instructions


def test_find_config_prefers_the_explicit_path_then_cwd_then_user(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    with pytest.raises(ConfigError, match="no config file found; looked at .*toolsift.json, .*xdg/toolsift"):
        find_config()
    user = tmp_path / "xdg" / "toolsift" / "toolsift.json"
    user.parent.mkdir(parents=True)
    user.write_text("{}")
    assert find_config() == user
    (tmp_path / "toolsift.json").write_text("{}")
    assert find_config() == tmp_path / "toolsift.json"
    with pytest.raises(ConfigError, match="config file not found"):
        find_config(tmp_path / "missing.json")


async def test_toolbox_lifecycle_errors(tmp_path: Path) -> None:
    (tmp_path / "toolsift.json").write_text("{}")
    box = Toolbox.from_config(tmp_path / "toolsift.json")
    with pytest.raises(RuntimeError, match="Toolbox is not started"):
        _ = box.sessions
    async with box:
        assert box.agents() == [] and len(box.sessions) == 0
        with pytest.raises(RuntimeError, match="Cannot enter a Toolbox twice"):
            await box.__aenter__()
    with pytest.raises(ConfigError, match="no agent named 'x'"):
        box.conversation("x")
