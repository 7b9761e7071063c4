"""The conversation helper: commands, turn scope, tool calls, limits, live skill grants, the result cap."""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as mcp_types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from local_tools import RecordingTool, SlowTool
from pydantic import ValidationError
from scripted_model import ScriptedModel

from toolsift import InvalidPattern, SkillNotFound
from toolsift._fence import fence
from toolsift.agent import AssistantMessage, ContextMessage, Conversation, ToolCall, ToolMessage
from toolsift.agent._commands import parse_command
from toolsift.config._internal import AgentConfig, LimitsConfig
from toolsift.pipeline import AuditTrail, Middleware, Pipeline, SecurityGuard
from toolsift.pipeline._call import refusal_of
from toolsift.pipeline._size import result_size, size_limit
from toolsift.registry import CallRecord, Level, Permissions, ToolContext, ToolRegistry, ToolResult
from toolsift.registry._internal import AuditEvent
from toolsift.skills import Skill, SkillSet
from toolsift.skills._internal import parse_skill_text

FLOW_MEMORY = """---
name: flow-memory
description: Work with the orchestration server's memory.
allowed-tools: claude-flow__memory_*
templating: jinja
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
    registry.replace_server(
        "claude-flow",
        [
            RecordingTool("claude-flow__memory_store"),
            RecordingTool("claude-flow__memory_search", read_only=True),
            RecordingTool("claude-flow__swarm_init"),
        ],
        internal=True,
    )
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
        ("/instructions", ("instructions", None, "")),
    ],
)
def test_parse_command(text: str, expected: tuple[str, str | None, str] | None) -> None:
    command = parse_command(text)
    assert (None if command is None else (command.name, command.skill, command.arguments)) == expected


async def test_use_switches_the_turn_to_the_skill_scope(registry: ToolRegistry, skills: SkillSet) -> None:
    conversation = Conversation(registry, skills)
    first = conversation.turn().tools
    assert tool_names(first) == ["read_file", "write_file", "general__echo"]
    reply = await conversation.handle_command("/use flow-memory your preferences")
    assert reply is not None and reply.ok and "2 tool(s) in scope" in reply.text
    turn = conversation.turn()
    memory = ["claude-flow__memory_store", "claude-flow__memory_search"]
    # The skill's tools join the end of the list, which rewrites what follows it anyway: the tools that left
    # the scope leave the list for free (see KeepRule), and the turn lists exactly the skill's scope.
    assert tool_names(turn.tools) == memory
    assert conversation.tool_list_rules()[-1].removal_cost == 0
    assert tool_names(registry.schemas_for_tools(turn.scope, "openai")) == memory
    assert turn.instructions == "" and turn.scope.skill == "flow-memory"
    assert conversation.history == [
        ContextMessage(
            "# Skill: flow-memory\n\nThe user activated skill 'flow-memory' (/use); follow its instructions until "
            "it stops.\n\nUse memory tools to remember your preferences.",
            source="skill:flow-memory",
        )
    ]
    unuse = await conversation.handle_command("/unuse")
    assert unuse is not None and unuse.text == "Stopped using skill 'flow-memory'."
    turn = conversation.turn()
    # Back to the first list, byte for byte (the tools come in the order they first entered the scope).
    assert turn.tools == first
    assert tool_names(registry.schemas_for_tools(turn.scope, "openai")) == ["read_file", "write_file", "general__echo"]
    fresh = Conversation(registry, skills)
    await fresh.use("flow-memory")
    assert tool_names(fresh.turn().tools) == memory  # a list starts with the scope's tools alone


async def test_use_binds_one_variable_to_the_whole_text(registry: ToolRegistry, skills: SkillSet) -> None:
    conversation = Conversation(registry, skills, instructions="You are helpful.")
    await conversation.handle_command("/use code-assist Refactor the auth module")
    turn = conversation.turn("anthropic")
    assert turn.instructions == "You are helpful."
    assert (
        conversation.instructions_now() == "You are helpful.\n\n# Skill: code-assist\n\nTask: Refactor the auth module"
    )
    assert [t["name"] for t in turn.tools] == ["read_file", "general__echo"]


async def test_use_binds_several_variables_from_pairs(registry: ToolRegistry, skills: SkillSet) -> None:
    conversation = Conversation(registry, skills)
    reply = await conversation.handle_command('/use release-notes version=2.1 audience="plugin authors"')
    assert reply is not None and reply.ok
    assert conversation.instructions_now().endswith("Notes for 2.1 for plugin authors.")


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


async def test_instructions_command_shows_what_the_model_gets(registry: ToolRegistry, skills: SkillSet) -> None:
    conversation = Conversation(registry, skills, instructions="Be brief.")
    base = await conversation.handle_command("/instructions")
    assert base is not None and base.text == "Be brief."
    await conversation.handle_command("/use flow-memory the deploy date")
    shown = await conversation.handle_command("/instructions")
    assert shown is not None and shown.text == conversation.instructions_now()
    assert "# Skill: flow-memory" in shown.text and "remember the deploy date" in shown.text
    empty = await Conversation(registry).handle_command("/instructions")
    assert empty is not None and empty.text.startswith("No instructions")


async def test_call_tool_carries_progress_in_the_call_record(registry: ToolRegistry) -> None:
    seen: list[CallRecord] = []

    async def handler(call: CallRecord) -> ToolResult:
        seen.append(call)
        return ToolResult.text("ok")

    async def progress(done: float, total: float | None, message: str | None) -> None:
        """Never called: the handler only receives it."""

    conversation = Conversation(registry, call_handler=handler)
    await conversation.call_tool(ToolCall(id="1", name="general__echo", arguments={}))
    await conversation.call_tool(ToolCall(id="2", name="general__echo", arguments={}), progress=progress)
    assert seen[0].progress is None and seen[1].progress is progress


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
    assert [m.role for m in conversation.history] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]


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
    agent = AgentConfig.model_validate(
        {"allowedTools": ["read_*"], "planMode": True, "permissions": {"level": "read"}, "limits": {"maxRounds": 2}}
    )
    conversation = Conversation.for_agent(registry, None, agent.model_copy(update={"name": "reader"}))
    assert tool_names(conversation.turn().tools) == ["read_file"]
    assert conversation.limits.max_rounds == 2 and conversation.permissions.level == Level.READ
    assert conversation.scope().agent == "reader"


def test_a_bad_allowlist_fails_at_construction(registry: ToolRegistry) -> None:
    with pytest.raises(InvalidPattern, match="agent 'ops' allowed_tools"):
        Conversation(registry, agent="ops", allowed_tools=["a b"])


# -- the active skill is looked up at every turn and call -----------------------------------------


class SwappableSkills:
    """A skill source whose one skill can be replaced, as an edit on disk replaces it in a loader."""

    def __init__(self, skill: Skill) -> None:
        self.skill = skill

    def get(self, name: str) -> Skill:
        if name != self.skill.name:
            raise SkillNotFound(name, [self.skill.name])
        return self.skill

    def invocable(self) -> list[Skill]:
        return [self.skill]


GLOBS = st.lists(
    st.sampled_from(
        ["read_file", "write_file", "general__*", "claude-flow__memory_*", "claude-flow__*", "*_file", "*"]
    ),
    max_size=3,
)


def grant(allowed: list[str], disallowed: list[str]) -> Skill:
    return Skill.model_validate(
        {"name": "ops", "description": "Ops.", "allowed-tools": allowed, "disallowed-tools": disallowed}
    )


@settings(max_examples=60, deadline=None)
@given(before=GLOBS, after=GLOBS, disallowed=GLOBS)
def test_calls_follow_the_skill_as_it_is_now_not_as_it_was_used(
    before: list[str], after: list[str], disallowed: list[str]
) -> None:
    async def check() -> None:
        reg = ToolRegistry()
        reg.register_many([RecordingTool("read_file"), RecordingTool("write_file")])
        reg.replace_server("general", [RecordingTool("general__echo")], internal=False)
        reg.replace_server(
            "claude-flow",
            [RecordingTool("claude-flow__memory_store"), RecordingTool("claude-flow__swarm_init")],
            internal=True,
        )
        source = SwappableSkills(grant(before, []))
        conversation = Conversation(reg, source)
        await conversation.use("ops")
        round_scope = conversation.turn().scope
        source.skill = grant(after, disallowed)
        fresh = Conversation(reg, source)
        await fresh.use("ops")
        listed = set(tool_names(fresh.turn().tools))
        declared = set(tool_names(conversation.turn().tools))
        # What the skill allowed before stays declared; only what it allows now can be called.
        assert listed <= declared <= listed | set(tool_names(reg.schemas_for_tools(round_scope, "openai")))
        for tool in reg:
            message = await conversation.call_tool(ToolCall("c", tool.spec.name, {}), round_scope)
            assert (not message.result.is_error) == (tool.spec.name in listed), tool.spec.name

    anyio.run(check)


async def test_a_skill_that_is_gone_is_dropped_once_with_a_notice(registry: ToolRegistry, skills: SkillSet) -> None:
    source = SwappableSkills(skills.get("flow-memory"))
    conversation = Conversation(registry, source)
    await conversation.use("flow-memory")
    source.skill = skills.get("code-assist")
    reply = await conversation.send("/tools", ScriptedModel(AssistantMessage(text="never")))
    assert "claude-flow" not in reply.text
    assert reply.notices == [
        "Skill 'flow-memory' is no longer active: it is no longer loaded (removed or "
        "renamed). The conversation goes on without a skill."
    ]
    assert conversation.take_notices() == [] and conversation.active_skill is None


# -- what reaches the model per result is capped ----------------------------------------------------


class FixedTool(RecordingTool):
    """Returns the same result every time."""

    def __init__(self, name: str, result: ToolResult) -> None:
        super().__init__(name)
        self.result = result

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return self.result


async def call_fixed(result: ToolResult, limits: LimitsConfig | None = None) -> ToolResult:
    registry = ToolRegistry()
    registry.register(FixedTool("fixed", result))
    return (await Conversation(registry, limits=limits).call_tool(ToolCall("1", "fixed", {}))).result


def texts(result: ToolResult) -> list[str]:
    return [b.text for b in result.content if isinstance(b, mcp_types.TextContent)]


async def test_a_huge_text_result_is_cut_to_the_default_cap_with_a_note(registry: ToolRegistry) -> None:
    registry.register(FixedTool("echo", ToolResult.text("x" * 2_000_000)))
    model = ScriptedModel(AssistantMessage(tool_calls=(ToolCall("e", "echo", {}),)), AssistantMessage(text="ok"))
    await Conversation(registry).send("echo a lot", model)
    sent = model.seen[1][1][-1]
    assert isinstance(sent, ToolMessage)
    kept, note = texts(sent.result)
    assert kept == "x" * 100_000  # 25,000 tokens at 4 bytes each
    assert note.startswith(
        "[toolsift: this result was cut to fit the limit of 100,000 bytes (about 25,000 "
        "tokens): the tool returned 2,000,000 bytes, 100,000 are shown."
    )


@pytest.mark.parametrize("cap", range(95, 104))
async def test_cutting_text_keeps_whole_utf8_characters(cap: int) -> None:
    result = await call_fixed(ToolResult.text("é€😀" * 100), LimitsConfig(max_result_bytes=cap))
    kept, note = texts(result)
    assert ("é€😀" * 100).startswith(kept) and cap - 3 <= len(kept.encode()) <= cap
    assert f"{len(kept.encode()):,} are shown" in note


async def test_blocks_past_the_cap_are_cut_or_left_out_and_named() -> None:
    image = mcp_types.ImageContent(data="A" * 400, mime_type="image/png")
    link = mcp_types.ResourceLink(uri="file:///a", name="a")
    result = ToolResult(
        content=[
            mcp_types.TextContent(text="a" * 60),
            image,
            link,
            mcp_types.TextContent(text="b" * 60),
            mcp_types.TextContent(text="c" * 60),
            mcp_types.AudioContent(data="B" * 8, mime_type="audio/wav"),
        ],
        structured_content={"rows": ["a" * 60]},
        is_error=True,
    )
    cut = await call_fixed(result, LimitsConfig(max_result_bytes=160))
    assert cut.is_error and cut.structured_content is None
    link_size = result_size(ToolResult(content=[link]))
    assert [type(b).__name__ for b in cut.content] == ["TextContent", "ResourceLink", "TextContent", "TextContent"]
    assert cut.content[1] == link
    kept_a, kept_b, note = texts(cut)
    assert kept_a == "a" * 60 and kept_b == "b" * (160 - 60 - link_size)
    assert note.endswith(
        "160 are shown; left out: 1 audio block, 1 image block, 1 text block, the structured "
        "content. Ask for less (a narrower query, a range, a page) to see the rest.]"
    )


async def test_structured_content_alone_is_cut_as_its_json_text() -> None:
    cut = await call_fixed(ToolResult(structured_content={"text": "é" * 200}), LimitsConfig(max_result_bytes=50))
    kept, note = texts(cut)
    assert kept == '{"text": "' + "é" * 20 and "left out" not in note


async def test_structured_twin_is_dropped_first_and_the_text_kept_whole() -> None:
    result = ToolResult.from_value({"rows": "r" * 70})
    cut = await call_fixed(result, LimitsConfig(max_result_bytes=100))
    assert texts(cut)[0] == texts(result)[0] and cut.structured_content is None
    assert "left out: the structured content" in texts(cut)[1]


async def test_a_cut_untrusted_text_keeps_its_closing_fence() -> None:
    fenced = fence("secret " * 1000, server="s", tool="t", nonce="0123abcd")
    closing = "\n<<<END UNTRUSTED TOOL RESULT id=0123abcd>>>"
    kept = texts(await call_fixed(ToolResult.text(fenced), LimitsConfig(max_result_bytes=200)))[0]
    assert kept == fenced[: 200 - len(closing)] + closing


async def test_a_result_up_to_the_cap_passes_unchanged_and_one_byte_more_is_cut() -> None:
    result = ToolResult(
        content=[mcp_types.TextContent(text="x" * 99), mcp_types.ImageContent(data="AAAA", mime_type="image/png")]
    )
    assert await call_fixed(result, LimitsConfig(max_result_bytes=103)) is result
    cut = await call_fixed(result, LimitsConfig(max_result_bytes=102))
    assert texts(cut)[0] == "x" * 99 and "left out: 1 image block" in texts(cut)[1]
    huge = ToolResult.text("x" * 500_000)
    assert await call_fixed(huge, LimitsConfig(max_result_tokens=None)) is huge


@pytest.mark.parametrize(
    ("limits", "cap"),
    [
        ({}, 100_000),
        ({"maxResultTokens": 10}, 40),
        ({"maxResultBytes": 30}, 30),
        ({"maxResultTokens": 5, "maxResultBytes": 30}, 20),
        ({"maxResultTokens": None}, None),
    ],
)
def test_the_cap_comes_from_the_agent_limits(limits: dict[str, Any], cap: int | None) -> None:
    config = LimitsConfig.model_validate(limits)
    assert size_limit(config.max_result_bytes, config.max_result_tokens) == cap


def test_a_cap_below_one_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"maxResultTokens\n  Input should be greater than or equal to 1"):
        LimitsConfig.model_validate({"maxResultTokens": 0})


async def test_calls_take_the_pipeline_path_and_refusals_are_marked_audited(registry: ToolRegistry) -> None:
    events: list[AuditEvent] = []
    registry.audit.subscribe(events.append)
    conversation = Conversation(registry, allowed_tools=["read_file"])
    denied = await conversation.call_tool(ToolCall("1", "write_file", {}))
    assert refusal_of(denied.result) == {"stage": "registry", "audited": True}
    assert [(e.kind, e.tool, e.layer) for e in events] == [("tool.denied", "write_file", 3)]


async def test_a_pipeline_handle_adds_its_stages_to_the_agent_loop(registry: ToolRegistry) -> None:
    events: list[AuditEvent] = []
    registry.audit.subscribe(events.append)
    pipeline = Pipeline.for_registry(
        registry, [Middleware(AuditTrail, audit=registry.audit), Middleware(SecurityGuard, max_argument_bytes=10)]
    )
    conversation = Conversation(registry, call_handler=pipeline.handle)
    refused = await conversation.call_tool(ToolCall("1", "general__echo", {"text": "x" * 50}))
    assert "over the limit of 10 bytes" in refused.result.text_content()
    assert [(e.kind, e.flags) for e in events] == [("tool.denied", ("SecurityGuard",))]
    ran = await conversation.call_tool(ToolCall("2", "general__echo", {}))
    assert not ran.result.is_error and events[-1].kind == "tool.executed"
