"""Cache-stable turns: a fixed system prompt, an append-only history, a tool list that only grows, deferral."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import anyio
import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from cli_helpers import Piped
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_stub import llm_stub, recorded
from local_tools import RecordingTool
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from scripted_model import ScriptedModel
from sdk_shapes import problems

from toolsift import AgentError, SkillNotFound
from toolsift._names import SEARCH_TOOL_NAME
from toolsift.agent import (
    AssistantMessage,
    ContextMessage,
    Conversation,
    Message,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)
from toolsift.agent._tool_list import KeepRule, LoadRule, StableToolList, estimated_tokens
from toolsift.agent.llm.anthropic import AnthropicChatModel, to_anthropic_messages
from toolsift.agent.llm.openai import to_openai_messages
from toolsift.agent.llm.openai_responses import OpenAIResponsesModel
from toolsift.registry import Permissions, ToolRegistry, ToolResult, TurnScope
from toolsift.registry._internal import AuditEvent
from toolsift.search import Discovery, SearchIndex, SearchToolsTool
from toolsift.skills import Skill, SkillSet
from toolsift.toolbox import Toolbox

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "examples" / "servers"


def name_of(schema: dict[str, Any]) -> str:
    return str(schema["function"]["name"] if "function" in schema else schema["name"])


def serialized(tools: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(tool, sort_keys=True) for tool in tools]


class DeferringModel(ScriptedModel):
    """A scripted model whose provider searches tools natively: it is given the deferred tools too."""

    defers_tools = True

    def __init__(self, *answers: AssistantMessage) -> None:
        super().__init__(*answers)
        self.deferred: list[list[dict[str, Any]]] = []

    async def complete(  # type: ignore[override]
        self,
        instructions: str,
        history: Sequence[Message],
        tools: list[dict[str, Any]],
        *,
        deferred: list[dict[str, Any]],
    ) -> AssistantMessage:
        self.deferred.append(deferred)
        return await super().complete(instructions, history, tools)


# -- the whole conversation against real servers ---------------------------------------------------


def write_skill(folder: Path, name: str, allowed: str, body: str) -> None:
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\nallowed-tools: {allowed}\n---\n{body}\n"
    )


def config(folder: Path, agent: dict[str, Any]) -> Path:
    skills = folder / "skills"
    write_skill(skills, "mem", "claude-flow__memory_*", "Keep notes in memory.")
    write_skill(skills, "swarm", "claude-flow__swarm_*", "Run swarms.")
    data = {
        "tools": {
            "mcpServers": {
                "claude-flow": {"command": sys.executable, "args": [str(SERVERS / "flow.py")]},
                "general": {
                    "command": sys.executable,
                    "args": [str(SERVERS / "general.py")],
                    "internalOnly": False,
                    "instructions": False,
                },
            }
        },
        "agents": {"default": agent},
        "skills": {"paths": [str(skills)], "userSkills": False},
    }
    path = folder / "toolsift.json"
    path.write_text(json.dumps(data))
    return path


def calls(*calls: ToolCall) -> AssistantMessage:
    return AssistantMessage(tool_calls=calls, usage=Usage(1000, 800, 100, 20))


def answer(text: str) -> AssistantMessage:
    return AssistantMessage(text=text, usage=Usage(1200, 1000, 0, 30))


async def test_every_request_extends_the_one_before(tmp_path: Path, examples_in_process: None) -> None:
    path = config(tmp_path, {"toolDiscovery": "search"})
    async with Toolbox.from_config(path) as box:
        chat = box.conversation(instructions="Be brief.")
        model = ScriptedModel(answer("hello"))
        await chat.send("hi", model)

        await chat.handle_command("/use mem the plan")
        model.answers = [calls(ToolCall("1", "claude-flow__memory_store", {"key": "k", "value": "v"})), answer("ok")]
        stored = await chat.send("store k", model)
        assert not stored.tool_calls[0].result.is_error

        await chat.handle_command("/use swarm")  # a switch: memory tools leave the scope
        model.answers = [calls(ToolCall("2", "claude-flow__memory_store", {"key": "k", "value": "w"})), answer("no")]
        refused = (await chat.send("store again", model)).tool_calls[0].result
        assert refused.is_error and "layer 1" in refused.text_content()  # the live scope decides, as ever
        # The swarm tools appended rewrite what follows the tool list anyway: removal adds only the rewrite
        # of the tools that stay after the first removed one (search_tools), not of those removed.
        switch = chat.tool_list_rules()[-1]
        assert not switch.keep and "claude-flow__memory_store" in switch.left
        assert 0 < switch.rewritten_tokens < 500 < switch.left_tokens
        assert "still in your tool list" not in refused.text_content()

        await chat.handle_command("/unuse")
        model.answers = [
            calls(ToolCall("3", SEARCH_TOOL_NAME, {"query": "claude-flow__agent_list"})),
            calls(ToolCall("4", "claude-flow__agent_list", {})),
            answer("listed"),
        ]
        found = await chat.send("list the agents", model)
        assert [m.result.is_error for m in found.tool_calls] == [False, False]

        await chat.handle_command("/use mem")
        await chat.send("again", model)
        write_skill(tmp_path / "skills", "mem", "claude-flow__memory_*", "Keep notes in memory, tersely.")
        assert "mem" in box.skills.reload().changed
        await chat.send("once more", model)

    requests = model.seen
    assert len(requests) == 10 and len(set(map(id, requests))) == 10
    # 1. The system prompt never changes.
    assert {instructions for instructions, _, _ in requests} == {"Be brief."}
    # 2. The tool list grows at its end (no schema changed here), but where the keep rule removed tools
    # that left the scope; then the tools stay in the order they first entered it, and a scope seen before
    # gives the same list as before.
    removed = {name for rule in chat.tool_list_rules() if not rule.keep for name in rule.left}
    for (_, _, before), (_, _, after) in pairwise(requests):
        if serialized(after)[: len(before)] != serialized(before):
            gone = {name_of(t) for t in before} - {name_of(t) for t in after}
            assert gone and gone <= removed
    lists = [[name_of(tool) for tool in tools] for _, _, tools in requests]
    entered = list(dict.fromkeys(name for names in lists for name in names))
    for names in lists:
        assert names == sorted(names, key=entered.index)
    assert lists[5] == lists[0]  # /unuse: the list of the first request again, a prefix the provider has cached
    # 3. Each request's messages start with the previous request's messages.
    for (_, before, _), (_, after, _) in pairwise(requests):
        assert after[: len(before)] == before
    told = [(m.source, m.text) for m in chat.history if isinstance(m, ContextMessage)]
    sources = [source for source, _ in told]
    assert sources == [
        "skill:mem",
        "server:claude-flow",
        "skill:mem",
        "skill:swarm",
        "skill:swarm",
        "skill:mem",
        "skill:mem",
    ]
    assert told[0][1].startswith("# Skill: mem\n\nThe user activated skill 'mem' (/use)")
    assert "ARGUMENTS: the plan" in told[0][1] and "SKILL.md is " in told[0][1]
    assert "<<<UNTRUSTED TOOL RESULT id=" in told[1][1]  # claude-flow is untrusted: fenced, once
    assert (
        told[2][1].startswith("Skill 'mem' is no longer active. Its instructions no longer apply")
        and "no longer in scope" in told[2][1]
    )
    assert "these instructions replace its earlier ones" in told[-1][1] and "tersely" in told[-1][1]
    # Context goes right before a user message or right after tool results, never inside a call's answers.
    for index, message in enumerate(chat.history):
        if isinstance(message, ContextMessage):
            follower = chat.history[index + 1]
            assert isinstance(follower, (ContextMessage, UserMessage)), follower


async def test_usage_is_summed_and_each_round_audited(tmp_path: Path) -> None:
    registry = ToolRegistry()
    registry.register(RecordingTool("read_file", read_only=True))
    events: list[AuditEvent] = []
    registry.audit.subscribe(events.append)
    model = ScriptedModel(calls(ToolCall("1", "read_file", {})), answer("done"))
    model.model = "claude-test"  # type: ignore[attr-defined]
    reply = await Conversation(registry, agent="ops").send("go", model)
    assert reply.usage == Usage(2200, 1800, 100, 50)
    assert reply.usage.cached_share == pytest.approx(1800 / 2200)
    rounds = [e for e in events if e.kind == "model.round"]
    assert [(e.tool, e.agent, dict(e.tokens)) for e in rounds] == [
        ("claude-test", "ops", {"input": 1000, "cache_read": 800, "cache_write": 100, "output": 20}),
        ("claude-test", "ops", {"input": 1200, "cache_read": 1000, "cache_write": 0, "output": 30}),
    ]
    assert json.loads(rounds[0].to_json())["tokens"]["cache_read"] == 800


# -- deferral: exactly what search_tools could unlock, and nothing the scope forbids ----------------

FLOW = ["memory_store", "memory_search", "memory_delete", "swarm_init", "swarm_search", "agent_list"]


def searchable_registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_many([RecordingTool("read_file", read_only=True), RecordingTool("write_file")])
    registry.replace_server("general", [RecordingTool("general__echo", read_only=True)], internal=False)
    registry.replace_server(
        "claude-flow", [RecordingTool(f"claude-flow__{n}", read_only="search" in n) for n in FLOW], internal=True
    )
    registry.replace_server("vault", [RecordingTool("vault__secret_read", read_only=True)], internal=True)
    registry.register(SearchToolsTool(SearchIndex(registry, unsearchable={"vault"})))
    return registry


def discovering(registry: ToolRegistry, skills: SkillSet, permissions: Permissions, **options: Any) -> Conversation:
    discovery = Discovery(
        registry,
        mode="conversation",
        pinned_tools={SEARCH_TOOL_NAME},
        permissions=permissions,
        unsearchable=lambda: {"vault"},
    )
    return Conversation(registry, skills, discovery=discovery, permissions=permissions, **options)


GLOBS = st.lists(
    st.sampled_from(["*", "*_search", "claude-flow__memory_*", "claude-flow__*", "general__*", "read_file"]),
    max_size=3,
)


async def unlockable_by_search(registry: ToolRegistry, conversation: Conversation, scope: TurnScope) -> set[str]:
    """The oracle: every tool a search_tools call with ``unlock: [name]`` unlocks in ``scope``."""
    found = set()
    for tool in registry:
        name = tool.spec.name
        if name == SEARCH_TOOL_NAME:
            continue
        message = await conversation.call_tool(ToolCall("s", SEARCH_TOOL_NAME, {"unlock": [name]}), scope)
        payload = message.result.structured_content or {}
        found.update(payload.get("unlocked", []))
    return found


@settings(max_examples=40, deadline=None)
@given(allowed=GLOBS, disallowed=GLOBS, deny_delete=st.booleans(), plan=st.booleans())
def test_deferred_tools_are_exactly_the_findable_and_allowed_ones(
    allowed: list[str], disallowed: list[str], deny_delete: bool, plan: bool
) -> None:
    async def check() -> None:
        registry = searchable_registry()
        skill = Skill.model_validate(
            {"name": "ops", "description": "Ops.", "allowed-tools": allowed, "disallowed-tools": disallowed}
        )
        permissions = Permissions(denylist=("claude-flow__memory_delete",) if deny_delete else ())
        conversation = discovering(registry, SkillSet({"ops": skill}), permissions, plan_mode=plan)
        await conversation.use("ops")
        turn = conversation.turn(defer=True)
        shown = {name_of(t) for t in turn.tools}
        deferred = [name_of(t) for t in turn.deferred]
        oracle = discovering(registry, SkillSet({"ops": skill}), permissions, plan_mode=plan)
        await oracle.use("ops")
        search_visible = SEARCH_TOOL_NAME in shown and registry.hidden_reason(SEARCH_TOOL_NAME, turn.scope) is None
        expected = await unlockable_by_search(registry, oracle, oracle.scope()) if search_visible else set()
        # What the skill surfaces is deferred too, unless the load rule put it up front (the history is empty).
        surfaced = {
            name
            for tool in registry.visible_tools(oracle.scope())
            if registry.is_internal(name := tool.spec.name) and name != SEARCH_TOOL_NAME
        }
        assert set(deferred) == (expected | surfaced) - shown and len(deferred) == len(set(deferred))
        assert surfaced & shown == {
            name for rule in conversation.load_rules() if not rule.by_reference for name in rule.tools
        }
        assert "vault__secret_read" not in deferred  # unsearchable servers are never deferred
        for name in deferred:  # the scope allows every deferred tool, and only those
            assert registry.hidden_reason(name, turn.scope) is None
        for tool in registry:
            name = tool.spec.name
            if name not in shown and name not in deferred:
                assert registry.hidden_reason(name, turn.scope) is not None

    anyio.run(check)


async def test_a_deferring_model_gets_references_not_new_tools() -> None:
    registry = searchable_registry()
    conversation = discovering(registry, SkillSet({}), Permissions())
    model = DeferringModel(
        calls(ToolCall("1", SEARCH_TOOL_NAME, {"query": "claude-flow__agent_list"})),
        calls(ToolCall("2", "claude-flow__agent_list", {}), ToolCall("3", "claude-flow__swarm_init", {})),
        answer("done"),
    )
    reply = await conversation.send("list agents", model)
    searched, listed, started = reply.tool_calls
    assert searched.references == ("claude-flow__agent_list",)
    # Loaded by reference, not added to the tools; a tool the provider's own search found is callable too.
    assert not listed.result.is_error and not started.result.is_error
    assert [[name_of(t) for t in tools] for _, _, tools in model.seen] == [
        ["read_file", "write_file", "general__echo", SEARCH_TOOL_NAME]
    ] * 3
    assert [name_of(t) for t in model.deferred[0]] == [f"claude-flow__{n}" for n in FLOW]
    assert model.deferred[0] == model.deferred[1] == model.deferred[2]
    plain = ScriptedModel(answer("ok"))  # a model that does not defer is called as before, without deferral
    await conversation.send("hello", plain)
    assert "claude-flow__agent_list" in [name_of(t) for t in plain.seen[0][2]]  # the unlock stays


# -- what leaves the scope stays declared, and is refused with the reason ---------------------------


async def test_an_expired_unlock_stays_declared_and_is_refused_with_the_reason() -> None:
    registry = searchable_registry()
    discovery = Discovery(registry, mode="turn", pinned_tools={SEARCH_TOOL_NAME})
    conversation = Conversation(registry, discovery=discovery)
    model = ScriptedModel(calls(ToolCall("1", SEARCH_TOOL_NAME, {"query": "claude-flow__agent_list"})), answer("ok"))
    await conversation.send("find", model)
    model.answers = [calls(ToolCall("2", "claude-flow__agent_list", {})), answer("ok")]
    refused = (await conversation.send("use it", model)).tool_calls[0].result
    assert refused.is_error and "layer 1" in refused.text_content()
    assert "its unlock by search_tools ended" in refused.text_content()
    assert "claude-flow__agent_list" in [name_of(t) for t in model.seen[-1][2]]


def test_load_rule_prices_reads_of_a_reference_against_a_rewrite() -> None:
    rule = LoadRule(skill="mem", tools=("a",), tool_tokens=100, rewritten_tokens=1000, expected_requests=100)
    assert rule.reference_cost == pytest.approx(1000) and rule.up_front_cost == pytest.approx(1150)
    assert rule.by_reference  # reads of 100 tokens over 100 requests cost less than rewriting 1000 tokens once
    later = LoadRule(skill="mem", tools=("a",), tool_tokens=100, rewritten_tokens=1000, expected_requests=115)
    assert not later.by_reference and later.reference_cost == pytest.approx(1150)


def test_keep_rule_prices_reads_against_a_rewrite() -> None:
    rule = KeepRule(left=("a",), left_tokens=100, rewritten_tokens=1000, expected_requests=100)
    assert rule.keep_cost == pytest.approx(1000) and rule.removal_cost == pytest.approx(1150) and rule.keep
    assert not KeepRule(left=("a",), left_tokens=100, rewritten_tokens=1000, expected_requests=115).keep


def schema(name: str, size: int = 40) -> dict[str, Any]:
    return {"name": name, "description": "x" * size}


def test_the_list_keeps_left_tools_until_removing_them_is_cheaper() -> None:
    tools = StableToolList()
    both = [("big", schema("big", 4000)), ("a", schema("a", 4000))]
    assert tools.update(both, registered=lambda n: True, why_left=str, tail_tokens=50, requests=1) == [
        schema("big", 4000),
        schema("a", 4000),
    ]
    only_a = [("a", schema("a", 4000))]
    kept = tools.update(
        only_a, registered=lambda n: True, why_left=lambda n: "skill x stopped", tail_tokens=50, requests=2
    )
    assert kept == [schema("big", 4000), schema("a", 4000)] and tools.left == {"big": "skill x stopped"}
    assert tools.decisions[-1].keep and tools.decisions[-1].left == ("big",)
    # Removal rewrites what stays after the removed tool ("a" and the tail), not the removed tool itself.
    assert tools.decisions[-1].rewritten_tokens == estimated_tokens(schema("a", 4000)) + 50
    # Many requests later, the left-over schema costs more in reads than one rewrite of what follows it.
    dropped = tools.update(only_a, registered=lambda n: True, why_left=str, tail_tokens=50, requests=40)
    assert dropped == [schema("a", 4000)] and tools.left == {} and not tools.decisions[-1].keep
    # A schema that changed is replaced where it stands; a tool no longer registered leaves.
    tools.update(
        [("a", schema("a")), ("b", schema("b"))], registered=lambda n: True, why_left=str, tail_tokens=0, requests=1
    )
    changed = tools.update(
        [("a", schema("a", 50)), ("b", schema("b"))], registered=lambda n: True, why_left=str, tail_tokens=0, requests=1
    )
    assert changed == [schema("a", 50), schema("b")]
    assert tools.update(
        [("b", schema("b"))], registered=lambda n: n != "a", why_left=str, tail_tokens=0, requests=1
    ) == [schema("b")]


def test_removal_is_free_where_the_prefix_breaks_anyway() -> None:
    tools = StableToolList()
    tools.update(
        [("a", schema("a")), ("b", schema("b"))], registered=lambda n: True, why_left=str, tail_tokens=9000, requests=1
    )
    # "a" changed in place before "b" left: the prefix is rewritten from "a" on anyway.
    after = tools.update(
        [("a", schema("a", 80))], registered=lambda n: True, why_left=str, tail_tokens=9000, requests=1
    )
    assert after == [schema("a", 80)] and tools.decisions[-1].rewritten_tokens == 0


def test_removing_the_last_tools_rewrites_only_what_follows_the_list() -> None:
    tools = StableToolList()
    tools.update(
        [("a", schema("a")), ("big", schema("big", 4000))],
        registered=lambda n: True,
        why_left=str,
        tail_tokens=50,
        requests=1,
    )
    # "big" is last: removing it rewrites the tail alone, cheaper at once than reading 1,000 tokens twice.
    assert tools.update([("a", schema("a"))], registered=lambda n: True, why_left=str, tail_tokens=50, requests=2) == [
        schema("a")
    ]
    assert tools.decisions[-1].rewritten_tokens == 50 and not tools.decisions[-1].keep


def test_a_list_rebuilt_after_a_removal_is_the_list_the_same_scope_had_before() -> None:
    tools = StableToolList()
    first = [("g1", schema("g1", 4000)), ("g2", schema("g2", 4000)), ("search", schema("search"))]
    before = tools.update(first, registered=lambda n: True, why_left=str, tail_tokens=9000, requests=1)
    skill = [("search", schema("search")), ("s1", schema("s1", 4000))]
    # /use: the globals leave and the skill's tools are appended (the tail is rewritten anyway).
    assert tools.update(skill, registered=lambda n: True, why_left=str, tail_tokens=9000, requests=1) == [
        schema("search"),
        schema("s1", 4000),
    ]
    # Only search_tools, which moves to the front, is written again: the removed tools are not sent at all.
    assert tools.decisions[-1].rewritten_tokens == estimated_tokens(schema("search")) and not tools.decisions[-1].keep
    # /unuse: the globals come back where they first stood, so the provider finds the first request's entry.
    again = tools.update(first, registered=lambda n: True, why_left=str, tail_tokens=9000, requests=3)
    assert again == before and tools.names == ("g1", "g2", "search")
    assert tools.decisions[-1].rewritten_tokens == estimated_tokens(schema("search"))  # behind g1 and g2 again


# -- what the model is told, and where ---------------------------------------------------------------


def flow_skills() -> SkillSet:
    return SkillSet(
        {
            "mem": Skill.model_validate(
                {"name": "mem", "description": "M.", "allowed-tools": ["claude-flow__memory_*"], "body": "Remember."}
            )
        }
    )


async def test_news_waits_while_tool_calls_have_no_results() -> None:
    registry = searchable_registry()
    conversation = Conversation(registry, flow_skills())
    call = ToolCall("1", "read_file", {})
    conversation.history += [UserMessage("go"), AssistantMessage(tool_calls=(call,))]
    await conversation.use("mem")
    conversation.turn()
    assert [m.role for m in conversation.history] == ["user", "assistant"]  # not between a call and its result
    conversation.history.append(await conversation.call_tool(call))
    conversation.turn()
    assert [m.role for m in conversation.history] == ["user", "assistant", "tool", "context"]
    conversation.turn()
    assert len(conversation.history) == 4  # told once


async def test_server_instructions_keep_their_fence_id_for_the_whole_conversation() -> None:
    registry = searchable_registry()
    ids: list[str] = []

    def instructions(nonce: str) -> dict[str, str]:
        ids.append(nonce)
        return {"claude-flow": f"fenced with {nonce}"}

    first = Conversation(registry, flow_skills(), server_instructions=instructions, plan_mode=True)
    await first.use("mem")
    texts = [first.instructions_now() for _ in range(3)]
    first.turn()
    first.turn()
    second = Conversation(registry, flow_skills(), server_instructions=instructions)
    second.instructions_now()
    assert len(set(ids[:-1])) == 1 and ids[-1] != ids[0] and len(ids[0]) == 16
    assert (
        texts[0]
        == texts[1]
        == texts[2]
        == (
            f"# Skill: mem\n\nRemember.\n\n# MCP server claude-flow\n\nfenced with {ids[0]}\n\n"
            "Plan mode: only read-only tools are available; propose changes instead of making them."
        )
    )
    told = [m for m in first.history if isinstance(m, ContextMessage) and m.source == "server:claude-flow"]
    assert [m.text for m in told] == [f"# MCP server claude-flow\n\nfenced with {ids[0]}"]
    assert first.turn().instructions == (
        "Plan mode: only read-only tools are available; propose changes instead of making them."
    )


def test_chat_prints_the_cache_hit_rate_after_each_answer(tmp_path: Path, examples_in_process: None) -> None:
    path = tmp_path / "toolsift.json"
    general = {"command": sys.executable, "args": [str(SERVERS / "general.py")], "internalOnly": False}
    path.write_text(json.dumps({"tools": {"mcpServers": {"general": general}}, "skills": {"userSkills": False}}))
    reply = recorded("openai_final.json")
    reply["usage"] = {"prompt_tokens": 2000, "completion_tokens": 8, "prompt_tokens_details": {"cached_tokens": 1500}}
    chat = Piped("how many words?", "/quit")
    with llm_stub((200, reply)) as stub:
        code = chat.run("-c", str(path), "chat", "-m", "openai:gpt-test", "--base-url", stub.url)
    assert code == 0, chat.err.text
    assert "The text has 4 words." in chat.out.text
    assert "[tokens] 2,000 in, 75% from cache, 8 out" in chat.out.text + chat.err.text


class RemovableSkills:
    """A skill source whose skills can be removed, as deleting a SKILL.md removes one from a loader."""

    def __init__(self, skills: SkillSet) -> None:
        self.skills = dict(skills.skills)

    def get(self, name: str) -> Skill:
        if name not in self.skills:
            raise SkillNotFound(name, sorted(self.skills))
        return self.skills[name]

    def invocable(self) -> list[Skill]:
        return list(self.skills.values())


async def test_a_dropped_skill_is_told_with_the_reason_and_its_tools_are_refused() -> None:
    registry = searchable_registry()
    source = RemovableSkills(flow_skills())
    conversation = Conversation(registry, source)
    await conversation.use("mem")
    model = ScriptedModel(answer("ok"))
    await conversation.send("hi", model)
    del source.skills["mem"]
    model.answers = [calls(ToolCall("1", "claude-flow__memory_store", {})), answer("ok")]
    reply = await conversation.send("store", model)
    told = [m.text for m in conversation.history if isinstance(m, ContextMessage)]
    assert told[-1] == (
        "Skill 'mem' is no longer active because it is no longer loaded (removed or renamed). Its instructions "
        "no longer apply and its tools are no longer in scope (calls to them are refused)."
    )
    refused = reply.tool_calls[0].result
    assert refused.is_error and "layer 1" in refused.text_content()
    # The global tools came back at the end of the list, rewriting what follows it anyway: the skill's
    # tools left the list at no cost, so the refusal needs no note that they are still listed.
    assert "claude-flow__memory_store" not in [name_of(t) for t in model.seen[-1][2]]
    assert not conversation.tool_list_rules()[-1].keep and conversation.tool_list_rules()[-1].removal_cost == 0
    assert model.seen[-1][0] == model.seen[0][0] == ""


# -- a deferring model: the tools never change; a skill's tools are loaded by reference -------------

MEMORY = [f"claude-flow__{n}" for n in FLOW if n.startswith("memory_")]


def mem_and_swarm() -> SkillSet:
    def skill(name: str, allowed: str) -> Skill:
        return Skill.model_validate({"name": name, "description": f"The {name} skill.", "allowed-tools": [allowed]})

    return SkillSet({"mem": skill("mem", "claude-flow__memory_*"), "swarm": skill("swarm", "claude-flow__swarm_*")})


def loads(history: Sequence[Message]) -> list[tuple[AssistantMessage, ToolMessage, Message]]:
    """The conversation's own search_tools exchanges, each with the message after it."""
    return [
        (message, history[index + 1], history[index + 2])  # type: ignore[misc]
        for index, message in enumerate(history)
        if isinstance(message, AssistantMessage)
        and any(call.id.startswith("toolsift_load_") for call in message.tool_calls)
    ]


#: An opening long enough that, at the first ``/use``, rewriting the prompt after the tool list costs more than
#: reading the skill's definitions loaded by reference (LoadRule): the skills' tools are loaded by reference.
LONG_OPENING = "hi, " + "here is the background of the task at hand. " * 20


async def skill_session(model: ScriptedModel, opening: str = LONG_OPENING) -> tuple[Conversation, list[ToolMessage]]:
    """opening; /use mem; a memory call; /use swarm (a switch); the memory call again; /unuse; /use mem again."""
    conversation = discovering(searchable_registry(), mem_and_swarm(), Permissions())
    model.answers = [answer("hello")]
    await conversation.send(opening, model)
    await conversation.use("mem")
    model.answers = [calls(ToolCall("1", "claude-flow__memory_store", {})), answer("stored")]
    stored = (await conversation.send("store k", model)).tool_calls
    await conversation.use("swarm")
    model.answers = [calls(ToolCall("2", "claude-flow__memory_store", {})), answer("refused")]
    refused = (await conversation.send("store again", model)).tool_calls
    conversation.unuse()
    model.answers = [answer("ok")]
    await conversation.send("plain", model)
    await conversation.use("mem")
    await conversation.send("memory again", model)
    return conversation, [*stored, *refused]


@pytest.mark.parametrize("format", ["anthropic", "openai-responses", "openai"])
@pytest.mark.parametrize(
    ("opening", "by_reference"), [(LONG_OPENING, [True, True]), ("hi", [False, True])], ids=["loaded", "mem-up-front"]
)
async def test_a_deferring_model_keeps_its_tools_byte_identical_unless_the_load_rule_puts_a_skills_up_front(
    format: str, opening: str, by_reference: list[bool]
) -> None:
    model = DeferringModel()
    model.format = format
    conversation, (stored, refused) = await skill_session(model, opening)
    # One choice per skill whose tools were neither loaded nor declared: /use mem again costs nothing more.
    rules = conversation.load_rules()
    assert [(rule.skill, rule.by_reference) for rule in rules] == [("mem", by_reference[0]), ("swarm", by_reference[1])]
    up_front = [name for rule in rules if not rule.by_reference for name in rule.tools]
    assert len(model.seen) == 7
    assert [name_of(t) for t in model.seen[0][2]] == ["read_file", "write_file", "general__echo", SEARCH_TOOL_NAME]
    # The tools change only when the rule chose up front: those are appended, the rest stays byte-identical.
    lists = [serialized(tools) for _, _, tools in model.seen]
    assert lists[1][: len(lists[0])] == lists[0] and all(later == lists[1] for later in lists[2:])
    assert [name_of(t) for t in model.seen[1][2][len(lists[0]) :]] == up_front
    # Deferred: exactly what each request's scope lets the model load (no skill: every claude-flow tool; a skill:
    # its own), never what it forbids, in the order first deferred; a scope seen before gives the same bytes.
    flow = [f"claude-flow__{n}" for n in FLOW]
    swarm = ["claude-flow__swarm_init", "claude-flow__swarm_search"]
    allowed = [flow, MEMORY, MEMORY, swarm, swarm, flow, MEMORY]
    for (_, _, tools), deferred, scope in zip(model.seen, model.deferred, allowed, strict=True):
        shown = {name_of(t) for t in tools}
        assert [name_of(t) for t in deferred] == [name for name in scope if name not in shown]
    assert json.dumps(model.deferred[6]) == json.dumps(model.deferred[2])
    # Calls are checked against the live scope: allowed under mem, refused with the reason under swarm.
    assert not stored.result.is_error
    assert refused.result.is_error and "layer 1" in refused.result.text_content()
    assert "no longer in scope: skill 'swarm' replaced skill 'mem'" in refused.result.text_content()
    # Each skill's tools the rule loads by reference are loaded once, right after its instructions and before
    # the user's message.
    exchanges = loads(conversation.history)
    assert [tools.references for _, tools, _ in exchanges] == [rule.tools for rule in rules if rule.by_reference]
    for (call_message, _, _), rule in zip(exchanges, [rule for rule in rules if rule.by_reference], strict=True):
        (call,) = call_message.tool_calls
        assert (call.name, call.arguments) == (SEARCH_TOOL_NAME, {"query": f"tools of skill {rule.skill}"})
        told = conversation.history[conversation.history.index(call_message) - 1]
        assert isinstance(told, ContextMessage) and told.source == f"skill:{rule.skill}"
    *mem, (_, swarm_tools, swarm_next) = exchanges
    assert swarm_next == UserMessage("store again")
    assert swarm_tools.references == ("claude-flow__swarm_init", "claude-flow__swarm_search")
    if mem:
        ((_, mem_tools, mem_next),) = mem
        assert mem_tools.references == tuple(MEMORY) and mem_next == UserMessage("store k")
        assert mem_tools.result.text_content() == f"Loaded the 3 tool(s) of skill mem: {', '.join(MEMORY)}."
    # Every request extends the one before.
    for (_, before, _), (_, after, _) in pairwise(model.seen):
        assert after[: len(before)] == before


async def test_a_deferring_model_drops_the_globals_a_skill_hides_and_gets_them_back_as_they_were() -> None:
    registry = searchable_registry()
    discovery = Discovery(registry, mode="conversation", offer_search=True, unsearchable=lambda: {"vault"})
    conversation = Conversation(registry, mem_and_swarm(), discovery=discovery)
    model = DeferringModel(answer("hello"))
    await conversation.send("hi", model)
    await conversation.use("mem")
    model.answers = [answer("noted")]
    await conversation.send("remember this", model)
    conversation.unuse()
    model.answers = [answer("back")]
    await conversation.send("and now?", model)
    first, mem, back = ([name_of(t) for t in tools] for _, _, tools in model.seen)
    assert first == ["read_file", "write_file", "general__echo", SEARCH_TOOL_NAME]
    # The load rule put the skill's tools up front, so nothing is left to load and search_tools, which the
    # skill's scope does not offer, is not given either; the globals it hides left with it, at no cost.
    assert mem == MEMORY
    removal = conversation.tool_list_rules()[0]
    assert removal.left == tuple(first) and not removal.keep and removal.removal_cost == 0
    assert back == first  # /unuse: the first request's list, byte for byte
    assert [serialized(tools) for _, _, tools in model.seen][2] == serialized(model.seen[0][2])


class OnDemandModel(DeferringModel):
    """A deferring model whose provider's search loads each deferred tool when the model calls it."""

    loads_on_demand = True


async def test_a_model_that_loads_on_demand_keeps_one_tool_list_and_is_told_the_skills_tools() -> None:
    model = OnDemandModel()
    conversation, (stored, refused) = await skill_session(model)
    lists = [serialized(tools) for _, _, tools in model.seen]
    # Only search_tools (pinned by the discovery) is up front, in every request: the globals are deferred too.
    assert [name_of(t) for t in model.seen[0][2]] == [SEARCH_TOOL_NAME] and len(set(map(tuple, lists))) == 1
    first_deferred = [name_of(t) for t in model.deferred[0]]
    assert {"read_file", "write_file", "general__echo", *MEMORY} <= set(first_deferred)
    assert "vault__secret_read" not in first_deferred  # never what the scope does not allow
    # Nothing is loaded by the conversation and no rule chooses: each skill's tools are named, once.
    assert not loads(conversation.history) and not conversation.load_rules()
    notes = [m.text for m in conversation.history if isinstance(m, ContextMessage) and "deferred" in m.text]
    assert notes == [
        f"Skill 'mem' gives these tools; they are deferred, so search for each before its first call: "
        f"{', '.join(MEMORY)}.",
        "Skill 'swarm' gives these tools; they are deferred, so search for each before its first call: "
        "claude-flow__swarm_init, claude-flow__swarm_search.",
    ]
    # Calls are checked against the live scope as ever.
    assert not stored.result.is_error
    assert refused.result.is_error and "layer 1" in refused.result.text_content()
    # Every request extends the one before.
    for (_, before, _), (_, after, _) in pairwise(model.seen):
        assert after[: len(before)] == before


@pytest.mark.parametrize(
    ("make", "needs"),
    [
        (lambda: AnthropicChatModel("claude-x", api_key="k", on_demand=True), "tool_search='bm25' or 'regex'"),
        (
            lambda: OpenAIResponsesModel("gpt-x", api_key="k", tool_search="client", on_demand=True),
            "tool_search='server'",
        ),
    ],
)
def test_on_demand_needs_a_search_the_provider_runs(make: Callable[[], object], needs: str) -> None:
    with pytest.raises(AgentError, match=re.escape(needs)):
        make()
    assert AnthropicChatModel("claude-x", api_key="k", tool_search="regex", on_demand=True).loads_on_demand
    assert OpenAIResponsesModel("gpt-x", api_key="k", on_demand=True).loads_on_demand


async def test_a_model_that_does_not_defer_gets_the_skills_tools_in_its_list() -> None:
    model = ScriptedModel(answer("hello"))
    conversation, (stored, refused) = await skill_session(model)
    names = [[name_of(t) for t in tools] for _, _, tools in model.seen]
    assert "claude-flow__memory_store" not in names[0] and "claude-flow__memory_store" in names[1]
    assert "claude-flow__swarm_init" in names[3]
    assert not loads(conversation.history) and not conversation.load_rules()  # nothing is loaded by reference
    assert not stored.result.is_error and refused.result.is_error


async def recorded_session(format: str) -> tuple[str, list[Message], list[dict[str, Any]], list[dict[str, Any]]]:
    """The last request of :func:`skill_session` for a deferring model of ``format``."""
    model = DeferringModel()
    model.format = format
    await skill_session(model)
    instructions, history, tools = model.seen[-1]
    return instructions, history, tools, model.deferred[-1]


def search_exchanges(history: Sequence[Message]) -> list[str]:
    return [call.id for message, _, _ in loads(history) for call in message.tool_calls]


async def test_anthropic_loads_a_skills_tools_with_references_in_alternating_turns() -> None:
    instructions, history, tools, deferred = await recorded_session("anthropic")
    body = AnthropicChatModel("claude-x", api_key="k").request(instructions, history, tools, deferred)
    assert problems(body, MessageCreateParamsNonStreaming) == []
    roles = [m["role"] for m in body["messages"]]
    assert roles[0] == "user" and all(a != b for a, b in pairwise(roles))
    for turn, reply in pairwise(body["messages"]):  # every tool_use is answered first thing in the next turn
        uses = [b["id"] for b in turn["content"] if b["type"] == "tool_use"]
        results = [b["tool_use_id"] for b in reply["content"] if b["type"] == "tool_result"]
        assert [b["type"] for b in reply["content"]][: len(results)] == ["tool_result"] * len(results)
        assert uses == results if turn["role"] == "assistant" else not results
    by_id = {b["tool_use_id"]: b for m in body["messages"] for b in m["content"] if b["type"] == "tool_result"}
    first, second = (by_id[i]["content"] for i in search_exchanges(history))
    assert [b["tool_name"] for b in first if b["type"] == "tool_reference"] == MEMORY
    assert first[0]["type"] == "text" and "claude-flow__swarm_init" in second[0]["text"]
    assert all(tool["defer_loading"] for tool in body["tools"] if tool["name"].startswith("claude-flow__"))


def test_anthropic_joins_answers_that_follow_one_another_in_one_turn() -> None:
    call = ToolCall("toolsift_load_1", SEARCH_TOOL_NAME, {"query": "tools of skill mem"})
    loaded = ToolMessage(call, ToolResult.text("Loaded"), references=("claude-flow__memory_store",))
    history: list[Message] = [UserMessage("hi"), AssistantMessage(text="hello"), AssistantMessage(tool_calls=(call,))]
    history += [loaded, UserMessage("store")]
    messages = to_anthropic_messages(history, references=frozenset({"claude-flow__memory_store"}))
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["type"] for b in messages[1]["content"]] == ["text", "tool_use"]
    assert [b["type"] for b in messages[2]["content"]] == ["tool_result", "text"]


@pytest.mark.parametrize("search", ["client", "server"])
async def test_responses_loads_a_skills_tools_by_tool_search_or_says_which_they_are(search: str) -> None:
    instructions, history, tools, deferred = await recorded_session("openai-responses")
    model = OpenAIResponsesModel("gpt-x", api_key="k", tool_search=search)  # type: ignore[arg-type]
    body = model.request(instructions, history, tools, deferred)
    assert problems(body, ResponseCreateParamsNonStreaming) == []
    items = body["input"]
    first = next(i for i, item in enumerate(items) if item.get("call_id") == search_exchanges(history)[0])
    call, output = items[first], items[first + 1]
    if search == "client":  # a client tool search and its output, which carries the definitions
        assert call == {
            "type": "tool_search_call",
            "call_id": call["call_id"],
            "execution": "client",
            "arguments": {"query": "tools of skill mem"},
            "status": "completed",
        }
        assert output["type"] == "tool_search_output" and output["execution"] == "client"
        (namespace,) = output["tools"]
        assert [f["name"] for f in namespace["tools"]] == sorted(MEMORY)
        assert not any(item.get("name") == SEARCH_TOOL_NAME for item in items)
    else:  # no loading by reference: a plain call and its text; the model loads them with the hosted search
        assert (call["type"], call["name"]) == ("function_call", SEARCH_TOOL_NAME)
        assert output["type"] == "function_call_output" and all(name in output["output"] for name in MEMORY)
        assert body["tools"][-1] == {"type": "tool_search", "execution": "server"}


async def test_chat_completions_gets_the_loading_as_a_plain_call_and_result() -> None:
    instructions, history, tools, _ = await recorded_session("openai")
    messages = to_openai_messages(instructions, history)
    body = {"model": "gpt-x", "messages": messages, "tools": tools}
    assert problems(body, CompletionCreateParamsNonStreaming) == []
    at = next(
        i
        for i, m in enumerate(messages)
        if m.get("tool_calls") and m["tool_calls"][0]["id"].startswith("toolsift_load_")
    )
    assert messages[at]["tool_calls"][0]["function"]["name"] == SEARCH_TOOL_NAME
    assert messages[at + 1]["role"] == "tool" and all(name in messages[at + 1]["content"] for name in MEMORY)


async def test_the_benchmark_counts_the_loaded_definitions_as_tool_tokens() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _provider import ProviderEndpoint

    anthropic = AnthropicChatModel("claude-x", api_key="k").request(*await recorded_session("anthropic"))
    responses = OpenAIResponsesModel("gpt-x", api_key="k", tool_search="client").request(
        *await recorded_session("openai-responses")
    )
    endpoint = ProviderEndpoint([])
    for api, body in [("anthropic", anthropic), ("responses", responses)]:
        usage = endpoint.usage_of(api, body)  # type: ignore[arg-type]
        assert usage.loaded_tokens > 0 and usage.tool_tokens > usage.loaded_tokens, api
        without_messages = {**body, "input" if api == "responses" else "messages": []}
        bare = endpoint.usage_of(api, without_messages)  # type: ignore[arg-type]
        assert bare.loaded_tokens == 0 and bare.tool_tokens == usage.tool_tokens - usage.loaded_tokens, api
