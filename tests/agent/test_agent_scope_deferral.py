"""What the scope forbids is never offered to load: a deferring model's deferred tools are exactly what the
scope lets it load now, in every adapter's request, and a refusal says why.

The requests are the adapters' own (``request``), or what reached the loopback provider
(``benchmarks/_provider.py``), whose hosted searches load any deferred tool the model calls, as
OpenAI's and Anthropic's do.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anthropic
import anyio
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_agent_cache_stable import discovering, name_of, searchable_registry

from toolsift._names import SEARCH_TOOL_NAME
from toolsift.agent import AssistantMessage, ChatModel, Conversation, ToolCall, ToolMessage, UserMessage
from toolsift.agent.llm.anthropic import AnthropicChatModel, to_anthropic_messages
from toolsift.agent.llm.openai import OpenAIChatModel
from toolsift.agent.llm.openai_responses import OpenAIResponsesModel, to_responses_input
from toolsift.registry import Permissions, ToolResult
from toolsift.skills import Skill, SkillSet
from toolsift.toolbox import Toolbox

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _provider import Call, ProviderEndpoint, Reply

SERVERS = Path(__file__).resolve().parents[2] / "examples" / "servers"

#: (provider, options): every adapter, with each way it searches.
ADAPTERS = [
    ("anthropic", {}),
    ("anthropic", {"tool_search": "bm25"}),
    ("anthropic", {"tool_search": "bm25", "on_demand": True}),
    ("openai-responses", {}),
    ("openai-responses", {"tool_search": "client"}),
    ("openai-responses", {"on_demand": True}),
    ("openai", {}),
]


@asynccontextmanager
async def adapter(provider: str, url: str, options: dict[str, Any]) -> AsyncIterator[ChatModel]:
    """A model of ``provider`` on a client closed while the event loop still runs."""
    if provider == "anthropic":
        async with anthropic.AsyncAnthropic(api_key="k", base_url=url, max_retries=0) as claude:
            yield AnthropicChatModel("claude-x", client=claude, **options)
        return
    async with openai.AsyncOpenAI(api_key="k", base_url=url + "/v1", max_retries=0) as client:
        if provider == "openai":
            yield OpenAIChatModel("gpt-x", client=client, **options)
        else:
            yield OpenAIResponsesModel("gpt-5.4", client=client, **options)


def defined(body: dict[str, Any]) -> Iterator[tuple[str, bool]]:
    """Every tool a request defines, as (name, deferred), whatever the API (namespaces opened)."""
    for tool in body.get("tools") or ():
        if tool.get("type") == "namespace":
            yield from ((function["name"], bool(function.get("defer_loading"))) for function in tool["tools"])
        elif "function" in tool:
            yield tool["function"]["name"], False
        elif "name" in tool:
            yield tool["name"], bool(tool.get("defer_loading"))


def loaded(body: dict[str, Any]) -> set[str]:
    """Every tool a request's conversation loads: Anthropic references, Responses search outputs."""
    names: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if value.get("type") == "tool_reference":
                names.add(value["tool_name"])
            if value.get("type") == "tool_search_output":
                names.update(name for name, _ in defined(value))
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(body.get("messages") or body.get("input") or [])
    return names


# -- the attack: a skill that allows one server, beside 214 deferred tools of another ----------------


@pytest.fixture
async def box(tmp_path: Path, examples_in_process: None) -> AsyncIterator[Toolbox]:
    """claude-flow's tools and general's, both internal; a skill that allows only general's."""
    skill = tmp_path / "skills" / "general-only"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: general-only\ndescription: General tools only.\nallowed-tools: general__*\n---\nUse general.\n"
    )
    servers = {
        "claude-flow": {"command": sys.executable, "args": [str(SERVERS / "flow.py")]},
        "general": {"command": sys.executable, "args": [str(SERVERS / "general.py")]},
    }
    config = tmp_path / "toolsift.json"
    config.write_text(
        json.dumps(
            {
                "tools": {"mcpServers": servers},
                "agents": {"default": {"toolDiscovery": "search"}},
                "skills": {"paths": [str(tmp_path / "skills")], "userSkills": False},
            }
        )
    )
    async with Toolbox.from_config(config) as started:
        yield started


@pytest.mark.parametrize(("provider", "options"), ADAPTERS, ids=lambda v: str(v))
async def test_a_skill_that_allows_one_server_leaves_no_other_tool_deferred_nor_loadable(
    box: Toolbox, provider: str, options: dict[str, Any]
) -> None:
    store = Call("claude-flow__memory_store", {"key": "release", "value": "May 4"})
    script = [Reply(text="hello"), Reply(calls=(store,)), Reply(text="refused")]
    chat = box.conversation(instructions="Be brief.")
    async with ProviderEndpoint(script) as endpoint, adapter(provider, endpoint.url, options) as model:
        await chat.send("hi", model)
        await chat.handle_command("/use general-only")
        reply = await chat.send("remember the release date", model)
    first, *under_skill = (request.body for request in endpoint.requests)
    if provider != "openai":  # before the skill, a deferring model may load claude-flow's tools
        assert any(name.startswith("claude-flow__") and deferred for name, deferred in defined(first))
    for body in under_skill:
        assert not [name for name, _ in defined(body) if name.startswith("claude-flow__")]
        assert not [name for name in loaded(body) if name.startswith("claude-flow__")]
        assert "claude-flow" not in json.dumps(body.get("tools") or [])  # no namespace describes it either
    # The provider's search had nothing of claude-flow to load, and toolsift refuses the call all the same,
    # saying why: it never was in the tool list.
    (refused,) = reply.tool_calls
    text = refused.result.text_content()
    assert refused.result.is_error and "still in your tool list" not in text
    if provider != "openai":
        assert (
            "Tool 'claude-flow__memory_store' is no longer in scope: skill 'general-only' became active and "
            "does not allow it. It is not among the tools you may load or call now" in text
        )


# -- every adapter's request, over random scopes ------------------------------------------------------

GLOBS = st.lists(
    st.sampled_from(
        ["*", "claude-flow__memory_*", "claude-flow__*", "claude-flow__swarm_*", "general__*", "read_file", "*_search"]
    ),
    max_size=3,
)
SKILL = st.one_of(st.none(), st.tuples(GLOBS, GLOBS))
REQUESTS = [
    ("anthropic", {}),
    ("anthropic", {"tool_search": "bm25"}),
    ("openai-responses", {}),
    ("openai-responses", {"tool_search": "client"}),
]


def skill_of(name: str, globs: tuple[list[str], list[str]]) -> Skill:
    allowed, disallowed = globs
    return Skill.model_validate(
        {"name": name, "description": "S.", "allowed-tools": allowed, "disallowed-tools": disallowed}
    )


def request_bodies(conversation: Conversation, format: str, on_demand: bool) -> list[dict[str, Any]]:
    """The next request of every adapter of ``format`` (Chat Completions: its tools), for one turn."""
    turn = conversation.turn(format, defer=format != "openai", on_demand=on_demand)
    history = conversation.history
    if format == "openai":
        return [{"tools": turn.tools}]
    options = [(p, o) for p, o in REQUESTS if p == format]
    bodies = []
    for _, option in options:
        if on_demand and option.get("tool_search") == "client":
            continue
        if format == "anthropic":
            model: Any = AnthropicChatModel("claude-x", api_key="k", **{"tool_search": "client", **option})
        else:
            model = OpenAIResponsesModel("gpt-x", api_key="k", **option)
        bodies.append(model.request(turn.instructions, history, turn.tools, turn.deferred))
    return bodies


async def forbidden_now(conversation: Conversation) -> set[str]:
    """The oracle: the tools whose call the scope refuses (layers 1-4) even once unlocked, as the call check
    itself answers; layer 5 is the caller's permissions, which refuse a listed tool's call with the reason."""
    refused = set()
    for tool in conversation.registry:
        name = tool.spec.name
        if name == SEARCH_TOOL_NAME:
            continue
        message = await conversation.call_tool(ToolCall("c", name, {}), conversation.scope().with_unlocked([name]))
        if message.result.is_error and re.search(r"denied at layer [1-4]\b", message.result.text_content()):
            refused.add(name)
    return refused


@settings(max_examples=40, deadline=None)
@given(
    before=SKILL,
    after=SKILL,
    deny=st.booleans(),
    plan=st.booleans(),
    format=st.sampled_from(["anthropic", "openai-responses", "openai"]),
    on_demand=st.booleans(),
)
def test_what_the_scope_forbids_is_neither_deferred_nor_loaded_in_any_adapters_request(
    before: tuple[list[str], list[str]] | None,
    after: tuple[list[str], list[str]] | None,
    deny: bool,
    plan: bool,
    format: str,
    on_demand: bool,
) -> None:
    """A first scope (a skill or none), a search that loads what it finds, then a second scope. In every
    adapter's next request, a tool the scope forbids (its call is refused even once unlocked) is neither
    deferred nor referenced; the tool list declares it only where the request before did (what the model
    was given stays, and a call to it is refused with the reason); and nothing is loaded that neither
    scope allowed."""

    async def check() -> None:
        registry = searchable_registry()
        skills = {name: skill_of(name, globs) for name, globs in (("a", before), ("b", after)) if globs}
        permissions = Permissions(denylist=("claude-flow__memory_delete",) if deny else ())
        conversation = discovering(registry, SkillSet(skills), permissions, plan_mode=plan)
        if before is not None:
            await conversation.use("a")
        forbidden_then = await forbidden_now(conversation)
        search = ToolCall("s", SEARCH_TOOL_NAME, {"queries": ["store a value in memory", "start a swarm"]})
        conversation.history.append(UserMessage("find tools"))
        first = conversation.turn(format, defer=format != "openai", on_demand=on_demand)
        conversation.history.append(AssistantMessage(tool_calls=(search,)))
        conversation.history.append(await conversation._run_call(search, first, format))
        earlier = {name_of(tool) for tool in first.tools}
        if after is not None:
            await conversation.use("b")
        else:
            conversation.unuse()
        forbidden = await forbidden_now(conversation)
        for body in request_bodies(conversation, format, on_demand):
            deferred = {name for name, deferred in defined(body) if deferred}
            up_front = {name for name, deferred in defined(body) if not deferred}
            assert not deferred & forbidden, body
            assert not (up_front & forbidden) - earlier, body
            references = {ref for message in body.get("messages") or () for ref in loaded({"messages": [message]})}
            assert references <= deferred | up_front and not references & forbidden, body
            assert not loaded(body) & forbidden_then & forbidden, body  # each load was allowed when made

    anyio.run(check)


# -- a refusal that says why ---------------------------------------------------------------------------


def mem_only() -> SkillSet:
    skill = {"name": "mem", "description": "M.", "allowed-tools": ["claude-flow__memory_*", SEARCH_TOOL_NAME]}
    return SkillSet({"mem": Skill.model_validate(skill)})


async def test_a_client_tool_search_that_loads_nothing_is_followed_by_what_the_search_said() -> None:
    """OpenAI's tool_search_output has no room for text: the search's answer (which skill forbids what it
    found, what the model can do) follows it as a developer message, so an empty output is never unexplained."""
    conversation = discovering(searchable_registry(), mem_only(), Permissions())
    await conversation.use("mem")
    search = ToolCall("s", SEARCH_TOOL_NAME, {"query": "initialize a swarm"})
    turn = conversation.turn("openai-responses", defer=True)
    found = await conversation._run_call(search, turn, "openai-responses")
    assert found.references == ()
    items = to_responses_input([AssistantMessage(tool_calls=(search,)), found], {}, client_search=True)
    assert [item["type"] for item in items] == ["tool_search_call", "tool_search_output", "message"]
    assert items[1]["tools"] == [] and items[2]["role"] == "developer"
    said = items[2]["content"]
    assert said.startswith("The tool search loaded no tool. search_tools answered: ")
    assert "layer 4: not in skill 'mem' allowed-tools" in said and "Only the user can change that" in said
    # A search that loaded tools carries them, and nothing more.
    loading = ToolMessage(search, ToolResult.text("ok"), references=("claude-flow__memory_store",))
    schema = {"type": "function", "name": "claude-flow__memory_store", "parameters": {"type": "object"}}
    items = to_responses_input([AssistantMessage(tool_calls=(search,)), loading], {"s": [schema]}, client_search=True)
    assert [item["type"] for item in items] == ["tool_search_call", "tool_search_output"]


def test_anthropic_leaves_out_server_search_references_to_tools_no_longer_deferred() -> None:
    """A server tool search's result is sent back as it came, but for references to tools the request no
    longer defers (the scope stopped allowing them): the provider loads only what the request defines."""
    result = {
        "type": "tool_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": [
                {"type": "tool_reference", "tool_name": "claude-flow__memory_store"},
                {"type": "tool_reference", "tool_name": "claude-flow__swarm_init"},
            ],
        },
    }
    use = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25", "input": {"query": "x"}}
    history = [UserMessage("hi"), AssistantMessage(text="found", provider_blocks=(use, result))]
    both = frozenset({"claude-flow__memory_store", "claude-flow__swarm_init"})
    assert to_anthropic_messages(history, references=both)[1]["content"][1] == result  # as it came
    sent = to_anthropic_messages(history, references=frozenset({"claude-flow__memory_store"}))[1]["content"]
    assert sent[1]["content"]["tool_references"] == [
        {"type": "tool_reference", "tool_name": "claude-flow__memory_store"}
    ]
    assert result["content"]["tool_references"][1]["tool_name"] == "claude-flow__swarm_init"  # the history is untouched


async def test_a_tool_that_leaves_the_deferred_set_is_refused_without_claiming_it_is_listed() -> None:
    registry = searchable_registry()
    conversation = discovering(registry, mem_only(), Permissions())
    before_skill = conversation.turn(defer=True)
    assert "claude-flow__swarm_init" in {name_of(t) for t in before_skill.deferred}
    await conversation.use("mem")
    turn = conversation.turn(defer=True)
    assert not any(name_of(t).startswith("claude-flow__swarm") for t in turn.deferred)
    refused = await conversation.call_tool(ToolCall("1", "claude-flow__swarm_init", {}), turn.scope)
    text = refused.result.text_content()
    assert refused.result.is_error and "still in your tool list" not in text
    assert "is no longer in scope: skill 'mem' became active and does not allow it" in text
    # Back in scope: given deferred again, where it stood before (the skill's tools stay in the list).
    conversation.unuse()
    again = conversation.turn(defer=True)
    shown = {name_of(t) for t in again.tools}
    assert [name_of(t) for t in again.deferred] == [
        name_of(t) for t in before_skill.deferred if name_of(t) not in shown
    ]
    assert "claude-flow__swarm_init" in {name_of(t) for t in again.deferred}
