"""The conversation helper: commands, turn scope, tool calls and limits."""

from __future__ import annotations

import pytest
from local_tools import RecordingTool, SlowTool
from scripted_model import ScriptedModel

from toolsift import InvalidPattern
from toolsift.agent import AssistantMessage, Conversation, ToolCall, ToolMessage, parse_command
from toolsift.mcp_sessions import AgentConfig, LimitsConfig
from toolsift.registry import Level, Permissions, ToolRegistry
from toolsift.skills import SkillSet, parse_skill_text

FLOW_MEMORY = """---
name: flow-memory
description: Work with the orchestration server's memory.
allowed-tools: claude-flow__memory_*
---
Use memory tools to remember {{ arguments or 'things' }}.
"""
CODE = """---
name: code-assist
description: Help with code.
allowed-tools: [read_file, write_file, general__*]
disallowed-tools: write_file
variables: [task]
---
Task: {{ task }}
"""
RELEASE = """---
name: release-notes
description: Write release notes.
variables:
  version: {description: The version}
  audience: {default: users}
---
Notes for {{ version }} for {{ audience }}.
"""
HIDDEN = """---
name: hidden
description: Background knowledge only.
user-invocable: false
---
x
"""


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_many([RecordingTool("read_file", read_only=True), RecordingTool("write_file")])
    registry.replace_server("general", [RecordingTool("general__echo", read_only=True)], internal=False)
    registry.replace_server("claude-flow", [RecordingTool("claude-flow__memory_store"),
                                            RecordingTool("claude-flow__memory_search", read_only=True),
                                            RecordingTool("claude-flow__swarm_init")], internal=True)
    return registry


@pytest.fixture
def skills() -> SkillSet:
    return SkillSet({s.name: s for s in map(parse_skill_text, (FLOW_MEMORY, CODE, RELEASE, HIDDEN))})


def tool_names(tools: list[dict[str, object]]) -> list[str]:
    return [t["function"]["name"] for t in tools]  # type: ignore[index]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hello", None),
        ("/etc/hosts is broken", None),
        ("/use code-assist Refactor auth", ("use", "code-assist", "Refactor auth")),
        ("  /use   flow-memory  ", ("use", "flow-memory", "")),
        ("/use", ("help", None, "use")),
        ("/unuse", ("unuse", None, "")),
        ("/skills", ("skills", None, "")),
        ("/tools", ("tools", None, "")),
        ("/help", ("help", None, "")),
    ],
)
def test_parse_command(text: str, expected: tuple[str, str | None, str] | None) -> None:
    command = parse_command(text)
    assert (None if command is None else (command.name, command.skill, command.arguments)) == expected


async def test_use_switches_the_turn_to_the_skill_scope(registry: ToolRegistry, skills: SkillSet) -> None:
    conversation = Conversation(registry, skills)
    assert tool_names(conversation.turn().tools) == ["read_file", "write_file", "general__echo"]
    reply = await conversation.handle_command("/use flow-memory your preferences")
    assert reply is not None and reply.ok and "2 tool(s) in scope" in reply.text
    turn = conversation.turn()
    assert tool_names(turn.tools) == ["claude-flow__memory_store", "claude-flow__memory_search"]
    assert turn.instructions == "# Skill: flow-memory\n\nUse memory tools to remember your preferences."
    assert turn.scope.skill == "flow-memory"
    unuse = await conversation.handle_command("/unuse")
    assert unuse is not None and unuse.text == "Stopped using skill 'flow-memory'."
    assert tool_names(conversation.turn().tools) == ["read_file", "write_file", "general__echo"]


async def test_use_binds_one_variable_to_the_whole_text(registry: ToolRegistry, skills: SkillSet) -> None:
    conversation = Conversation(registry, skills, instructions="You are helpful.")
    await conversation.handle_command("/use code-assist Refactor the auth module")
    turn = conversation.turn("anthropic")
    assert turn.instructions == "You are helpful.\n\n# Skill: code-assist\n\nTask: Refactor the auth module"
    assert [t["name"] for t in turn.tools] == ["read_file", "general__echo"]


async def test_use_binds_several_variables_from_pairs(registry: ToolRegistry, skills: SkillSet) -> None:
    conversation = Conversation(registry, skills)
    reply = await conversation.handle_command('/use release-notes version=2.1 audience="plugin authors"')
    assert reply is not None and reply.ok
    assert conversation.turn().instructions.endswith("Notes for 2.1 for plugin authors.")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("/use nope", "Unknown skill 'nope'; available: code-assist, flow-memory, hidden, release-notes"),
        ("/use release-notes audience=x", "missing required variable\\(s\\) 'version'"),
        ("/use release-notes colour=red", "unknown variable 'colour'"),
        ("/use hidden", "Unknown skill 'hidden'; available: code-assist, flow-memory, release-notes"),
    ],
)
async def test_bad_use_is_a_clear_message_and_the_conversation_goes_on(
    registry: ToolRegistry, skills: SkillSet, text: str, message: str
) -> None:
    conversation = Conversation(registry, skills)
    reply = await conversation.handle_command(text)
    assert reply is not None and not reply.ok
    import re

    assert re.search(message, reply.text), reply.text
    assert conversation.active_skill is None


async def test_use_without_skills_configured(registry: ToolRegistry) -> None:
    reply = await Conversation(registry).handle_command("/use x")
    assert reply is not None and not reply.ok and "no skills are loaded" in reply.text


async def test_listing_commands(registry: ToolRegistry, skills: SkillSet) -> None:
    conversation = Conversation(registry, skills)
    await conversation.handle_command("/use flow-memory")
    listing = await conversation.handle_command("/skills")
    assert listing is not None
    assert "* /use flow-memory" in listing.text and "hidden" not in listing.text
    tools = await conversation.handle_command("/tools")
    assert tools is not None and "claude-flow__memory_store (internal)" in tools.text
    help_reply = await conversation.handle_command("/use")
    assert help_reply is not None and not help_reply.ok and "/use <skill>" in help_reply.text
    assert (await Conversation(registry).handle_command("/skills")).text == "No skills are loaded."  # type: ignore[union-attr]
    assert (await Conversation(registry, allowed_tools=[]).handle_command("/tools")).text == "No tools are in scope."  # type: ignore[union-attr]
    assert (await Conversation(registry).handle_command("/unuse")).ok is False  # type: ignore[union-attr]


async def test_calls_outside_the_scope_become_denial_results(registry: ToolRegistry, skills: SkillSet) -> None:
    conversation = Conversation(registry, skills, allowed_tools=["read_file", "claude-flow__*", "general__*"])
    await conversation.handle_command("/use flow-memory")
    layer4 = await conversation.call_tool(ToolCall("1", "general__echo", {}))
    assert layer4.result.is_error and "layer 4" in layer4.result.text_content()
    layer3 = await conversation.call_tool(ToolCall("2", "write_file", {}))
    assert "layer 3" in layer3.result.text_content() or "layer 4" in layer3.result.text_content()
    await conversation.handle_command("/unuse")
    layer3 = await conversation.call_tool(ToolCall("3", "write_file", {}))
    assert "layer 3 (agent allowed_tools)" in layer3.result.text_content()
    unknown = await conversation.call_tool(ToolCall("4", "nope", {}))
    assert "Unknown tool 'nope'" in unknown.result.text_content()
    bad_json = await conversation.call_tool(ToolCall("5", "read_file", "{oops"))
    assert "not a JSON object" in bad_json.result.text_content()


async def test_plan_mode_offers_and_allows_read_only_tools(registry: ToolRegistry) -> None:
    conversation = Conversation(registry, plan_mode=True)
    turn = conversation.turn()
    assert tool_names(turn.tools) == ["read_file", "general__echo"] and "Plan mode" in turn.instructions
    denied = await conversation.call_tool(ToolCall("1", "write_file", {}))
    assert "plan mode" in denied.result.text_content()


async def test_caller_permissions_apply_to_model_calls(registry: ToolRegistry) -> None:
    conversation = Conversation(registry, permissions=Permissions(level=Level.READ))
    denied = await conversation.call_tool(ToolCall("1", "write_file", {}))
    assert "layer 5" in denied.result.text_content()


async def test_send_runs_tool_rounds_until_the_model_answers(registry: ToolRegistry, skills: SkillSet) -> None:
    model = ScriptedModel(
        AssistantMessage(tool_calls=(ToolCall("a", "read_file", {"text": "x"}),)),
        AssistantMessage(tool_calls=(ToolCall("b", "general__echo", {}), ToolCall("c", "nope", {}))),
        AssistantMessage(text="done"),
    )
    conversation = Conversation(registry, skills)
    reply = await conversation.send("go", model)
    assert reply.text == "done" and reply.rounds == 2 and reply.limit is None
    assert [m.call.id for m in reply.tool_calls] == ["a", "b", "c"]
    assert reply.tool_calls[2].result.is_error
    assert [m.role for m in conversation.history] == ["user", "assistant", "tool", "assistant", "tool", "tool",
                                                       "assistant"]


async def test_send_answers_commands_without_the_model(registry: ToolRegistry, skills: SkillSet) -> None:
    model = ScriptedModel(AssistantMessage(text="never"))
    reply = await Conversation(registry, skills).send("/use flow-memory", model)
    assert reply.command and model.seen == []


async def test_round_limit_stops_with_a_clear_message_and_a_valid_history(registry: ToolRegistry) -> None:
    model = ScriptedModel(AssistantMessage(tool_calls=(ToolCall("x", "read_file", {}),)))
    conversation = Conversation(registry, limits=LimitsConfig(max_rounds=3))
    reply = await conversation.send("loop forever", model)
    assert reply.limit is not None and reply.limit.limit == "max_rounds" and reply.rounds == 3
    assert reply.text == "Stopped: Agent limit reached: max_rounds = 3. Ask again or raise limits.maxRounds."
    last = conversation.history[-1]
    assert isinstance(last, ToolMessage) and "tool-round limit" in last.result.text_content()


async def test_message_time_limit_stops_a_slow_model(registry: ToolRegistry) -> None:
    model = ScriptedModel(AssistantMessage(text="late"), delay=5)
    reply = await Conversation(registry, limits=LimitsConfig(message_timeout=0.05)).send("hi", model)
    assert reply.limit is not None and reply.limit.limit == "message_timeout"
    assert "message_timeout" in reply.text


async def test_message_time_limit_closes_calls_that_did_not_run(registry: ToolRegistry) -> None:
    registry.register(SlowTool("slow", seconds=30))
    model = ScriptedModel(AssistantMessage(tool_calls=(ToolCall("s1", "slow", {}), ToolCall("s2", "slow", {}))))
    conversation = Conversation(registry, limits=LimitsConfig(message_timeout=0.1))
    reply = await conversation.send("hi", model)
    assert reply.limit is not None
    closed = [m for m in conversation.history if isinstance(m, ToolMessage)]
    assert {m.call.id for m in closed} == {"s1", "s2"}
    assert all("message time limit" in m.result.text_content() for m in closed)


async def test_call_time_limit_turns_into_a_tool_error(registry: ToolRegistry) -> None:
    registry.register(SlowTool("slow", seconds=30))
    conversation = Conversation(registry, limits=LimitsConfig(call_timeout=0.05))
    message = await conversation.call_tool(ToolCall("1", "slow", {}))
    assert message.result.text_content() == "Tool 'slow' timed out after 0.05s"


async def test_conversation_for_an_agent_profile(registry: ToolRegistry) -> None:
    agent = AgentConfig.model_validate({"allowedTools": ["read_*"], "planMode": True,
                                        "permissions": {"level": "read"}, "limits": {"maxRounds": 2}})
    conversation = Conversation.for_agent(registry, None, agent.model_copy(update={"name": "reader"}))
    assert tool_names(conversation.turn().tools) == ["read_file"]
    assert conversation.limits.max_rounds == 2 and conversation.permissions.level == Level.READ
    assert conversation.scope().agent == "reader"


def test_a_bad_allowlist_fails_at_construction(registry: ToolRegistry) -> None:
    with pytest.raises(InvalidPattern, match="agent 'ops' allowed_tools"):
        Conversation(registry, agent="ops", allowed_tools=["a b"])
