"""The workspace tools in the agent loop (``tools.builtins``), and what ``toolsift check`` says about skills' tools."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from scripted_model import ScriptedModel

from toolsift import ConfigError
from toolsift._assembly import skills_loader, unprovided_skill_tools
from toolsift.agent import AssistantMessage, ToolCall
from toolsift.agent._unreached import WORKSPACE_TOOLS_OFF
from toolsift.cli import main
from toolsift.config import parse_config, validate_config
from toolsift.toolbox import Toolbox

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "examples" / "servers"
SKILLS = ROOT / "examples" / "skills"
FILE_TOOLS = ["list_directory", "read_file", "write_file"]


# The workspace tools are the point, not the servers' processes: the example servers run in this process.
in_process = pytest.mark.usefixtures("examples_in_process")


def write_config(folder: Path, *, builtins: dict[str, Any] | None = None, **extra: Any) -> Path:
    """The example servers and skills, with ``folder`` as the workspace."""
    data: dict[str, Any] = {
        "tools": {
            "mcpServers": {
                "claude-flow": {"command": sys.executable, "args": [str(SERVERS / "flow.py")]},
                "general": {"command": sys.executable, "args": [str(SERVERS / "general.py")], "internalOnly": False},
            },
        },
        "skills": {"paths": [str(SKILLS)], "userSkills": False},
        "workspace": str(folder),
        "agents": {"reader": {"permissions": {"level": "read"}}},
        **extra,
    }
    if builtins is not None:
        data["tools"]["builtins"] = builtins
    path = folder / "toolsift.json"
    path.write_text(json.dumps(data))
    return path


def names(tools: list[dict[str, Any]]) -> list[str]:
    return [tool["function"]["name"] for tool in tools]


@in_process
async def test_code_assist_reads_and_writes_workspace_files_in_a_conversation(tmp_path: Path) -> None:
    (tmp_path / "auth.py").write_text("def login(): ...\n")
    async with Toolbox.from_config(write_config(tmp_path, builtins={"enabled": True})) as box:
        chat = box.conversation()
        reply = await chat.handle_command("/use code-assist Refactor the auth module")
        assert reply is not None and reply.ok
        offered = names(chat.turn().tools)
        assert set(FILE_TOOLS) <= set(offered) and "general__echo" in offered
        model = ScriptedModel(
            AssistantMessage(
                tool_calls=(
                    ToolCall("1", "list_directory", {"path": "."}),
                    ToolCall("2", "read_file", {"path": "auth.py"}),
                    ToolCall("3", "write_file", {"path": "auth_v2.py", "content": "def sign_in(): ...\n"}),
                    ToolCall("4", "read_file", {"path": "toolsift.json"}),
                )
            ),
            AssistantMessage(text="Refactored."),
        )
        answer = await chat.send("go", model)
        listing, read, written, protected = (call.result for call in answer.tool_calls)
        assert not listing.is_error and "auth.py" in listing.text_content()
        assert not read.is_error and "def login" in read.text_content()
        assert not written.is_error and (tmp_path / "auth_v2.py").read_text() == "def sign_in(): ...\n"
        # The same confinement as toolsift serve: what configures toolsift is out of reach.
        assert protected.is_error and "toolsift.json" in protected.text_content()
        assert answer.text == "Refactored."


@in_process
async def test_the_workspace_tools_are_off_unless_the_config_enables_them(tmp_path: Path) -> None:
    (tmp_path / "auth.py").write_text("secret plan\n")
    async with Toolbox.from_config(write_config(tmp_path)) as box:
        assert not set(FILE_TOOLS) & {tool.spec.name for tool in box.registry}
        chat = box.conversation()
        await chat.handle_command("/use code-assist Refactor the auth module")
        model = ScriptedModel(
            AssistantMessage(tool_calls=(ToolCall("1", "read_file", {"path": "auth.py"}),)),
            AssistantMessage(text="done"),
        )
        result = (await chat.send("go", model)).tool_calls[0].result
        assert result.is_error and "read_file" in result.text_content() and "secret plan" not in result.text_content()


@in_process
async def test_workspace_tools_keep_their_permission_levels_and_command_allowlist(tmp_path: Path) -> None:
    path = write_config(
        tmp_path,
        builtins={"enabled": True, "commands": {"allowedPrograms": ["ls"]}},
        agents={"reader": {"permissions": {"level": "read"}}, "runner": {"permissions": {"level": "execute"}}},
    )
    (tmp_path / "notes.txt").write_text("hello\n")
    async with Toolbox.from_config(path) as box:
        reader = box.conversation("reader")
        read = await reader.call_tool(ToolCall("0", "read_file", {"path": "notes.txt"}))
        assert not read.result.is_error and "hello" in read.result.text_content()
        denied = await reader.call_tool(ToolCall("1", "write_file", {"path": "x.txt", "content": "x"}))
        assert denied.result.is_error and "write" in denied.result.text_content() and not (tmp_path / "x.txt").exists()
        ran = await reader.call_tool(ToolCall("1", "exec_shell", {"command": "ls"}))
        assert ran.result.is_error and "notes.txt" not in ran.result.text_content()
        runner = box.conversation("runner")
        listed = await runner.call_tool(ToolCall("2", "exec_shell", {"command": "ls"}))
        assert not listed.result.is_error and "notes.txt" in listed.result.text_content()
        refused = await runner.call_tool(ToolCall("3", "exec_shell", {"command": "cat notes.txt"}))
        assert refused.result.is_error and "cat" in refused.result.text_content()


@in_process
async def test_use_names_why_each_pattern_reaches_no_tool_and_what_turns_it_on(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "mixed"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: mixed\ndescription: Mixed.\n"
        "allowed-tools: claude-flow__memory_store read_file nothere__x claude-flow__nope* general__zzz\n---\nGo.\n"
    )
    path = write_config(tmp_path, skills={"paths": [str(tmp_path / "skills")], "userSkills": False})
    async with Toolbox.from_config(path) as box:
        reply = await box.conversation("reader").handle_command("/use mixed")
    assert reply is not None and reply.ok
    lines = reply.text.splitlines()
    assert lines[0] == "Using skill 'mixed': 0 tool(s) in scope. /unuse to stop."
    assert lines[1] == (
        "  claude-flow__memory_store: claude-flow__memory_store is left out at layer 5: "
        "it requires level write, the caller has read"
    )
    assert lines[2] == "  read_file: " + WORKSPACE_TOOLS_OFF
    assert lines[3].startswith("  nothere__x: no tool of server 'nothere' is registered: it is not configured")
    assert lines[4].startswith("  claude-flow__nope*: no registered tool matches it")
    assert lines[5].startswith("  general__zzz: no registered tool matches it") and len(lines) == 6


@in_process
async def test_a_workspace_tool_the_agent_may_never_call_is_not_offered(tmp_path: Path) -> None:
    path = write_config(
        tmp_path,
        builtins={"enabled": True},
        agents={"runner": {"permissions": {"level": "execute"}}, "careful": {"permissions": {"denylist": ["*_file"]}}},
    )
    async with Toolbox.from_config(path) as box:
        # The default agent's level is below what exec_shell requires: every call would be refused.
        chat = box.conversation()
        offered = names(chat.turn("openai").tools)
        assert "exec_shell" not in offered and {"read_file", "write_file", "list_directory"} <= set(offered)
        refused = await chat.call_tool(ToolCall("1", "exec_shell", {"command": "ls"}))
        assert refused.result.is_error and "requires level execute" in refused.result.text_content()
        assert "exec_shell" in names(box.conversation("runner").turn("openai").tools)
        careful = names(box.conversation("careful").turn("openai").tools)
        assert "list_directory" in careful and not {"read_file", "write_file", "exec_shell"} & set(careful)


@in_process
async def test_a_skill_without_allowed_tools_keeps_search_tools_in_its_turns(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "plain"
    folder.mkdir(parents=True)
    # As Anthropic's published skills are written: a name and a description, no allowed-tools.
    (folder / "SKILL.md").write_text("---\nname: plain\ndescription: Writes plain prose.\n---\nWrite plainly.\n")
    path = write_config(tmp_path, skills={"paths": [str(tmp_path / "skills")], "userSkills": False})
    async with Toolbox.from_config(path) as box:
        chat = box.conversation()
        assert "search_tools" in names(chat.turn().tools)
        reply = await chat.handle_command("/use plain")
        assert reply is not None and reply.ok
        assert "search_tools" in names(chat.turn().tools)
        model = ScriptedModel(
            AssistantMessage(tool_calls=(ToolCall("s", "search_tools", {"query": "store a value in memory"}),)),
            AssistantMessage(tool_calls=(ToolCall("m", "claude-flow__memory_store", {"key": "k", "value": "v"}),)),
            AssistantMessage(text="stored"),
        )
        searched, stored = (await chat.send("remember k", model)).tool_calls
        assert "claude-flow__memory_store" in searched.result.text_content()
        assert not stored.result.is_error  # the internal server is reachable while the skill is on


def test_check_names_each_skill_entry_only_toolsift_serve_provides(tmp_path: Path) -> None:
    config = parse_config({"skills": {"paths": [str(SKILLS)], "userSkills": False}, "workspace": str(tmp_path)})
    skills = skills_loader(config).load()
    found = {(Path(str(w.path)).parent.name, w.message.split("'")[3]) for w in unprovided_skill_tools(config, skills)}
    assert {("code-assist", name) for name in FILE_TOOLS} <= found
    message = str(unprovided_skill_tools(config, skills)[0])
    assert "SKILL.md" in message and "only toolsift serve provides it" in message and '"enabled": true' in message
    unserved = parse_config({"skills": {"paths": [str(SKILLS)]}, "serve": {"builtins": False}})
    assert "no source provides it" in str(unprovided_skill_tools(unserved, skills)[0])
    enabled = parse_config({"tools": {"builtins": {"enabled": True}}, "skills": {"paths": [str(SKILLS)]}})
    assert unprovided_skill_tools(enabled, skills) == []


def test_check_command_prints_the_warning_with_the_skill_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_config(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["-c", str(path), "check", "--json"])
    assert info.value.code == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert any(
        w["file"] == str(SKILLS / "code-assist" / "SKILL.md") and "'read_file'" in w["message"] for w in warnings
    )
    with pytest.raises(SystemExit):
        main(["-c", str(write_config(tmp_path, builtins={"enabled": True})), "check", "--json"])
    assert not any("workspace tool" in w["message"] for w in json.loads(capsys.readouterr().out)["warnings"])


def test_check_warns_about_a_lazy_global_server(tmp_path: Path) -> None:
    path = tmp_path / "toolsift.json"
    entry = {"command": sys.executable, "args": [str(SERVERS / "general.py")], "lazy": True}
    path.write_text(
        json.dumps({"tools": {"mcpServers": {"general": {**entry, "internalOnly": False}, "flow": entry}}}, indent=1)
    )
    warnings = validate_config(path).warnings
    assert [w.field for w in warnings] == ["tools.mcpServers.general.lazy"]
    assert "general__" in warnings[0].message and "internalOnly: true" in warnings[0].message
    assert warnings[0].line is not None


def test_enabled_workspace_tools_need_an_existing_workspace(tmp_path: Path) -> None:
    config = parse_config({"tools": {"builtins": {"enabled": True}}, "workspace": str(tmp_path / "gone")})
    with pytest.raises(ConfigError, match=r"workspace: .*gone' is not an existing directory"):
        Toolbox(config)
    Toolbox(parse_config({"workspace": str(tmp_path / "gone")}))  # off: the workspace is not needed
