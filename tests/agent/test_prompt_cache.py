"""Prompt caching: the loopback provider's cache model, and the adapters' requests against it.

Requests go through the real ``anthropic`` and ``openai`` SDK clients to the loopback endpoint
(``benchmarks/_provider.py``); what arrives is checked against the SDKs' own request types.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from sdk_shapes import problems

from toolsift import AgentError
from toolsift.agent import (
    AssistantMessage,
    ContextMessage,
    Conversation,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from toolsift.agent.llm.anthropic import AnthropicChatModel, to_anthropic_messages
from toolsift.agent.llm.openai import OpenAIChatModel, to_openai_messages
from toolsift.registry import ToolRegistry, ToolResult, tool

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _provider import (
    Call,
    ErrorReply,
    ProviderEndpoint,
    Reply,
    anthropic_usage,
    count_tokens,
    openai_cached_tokens,
)

BREAKPOINT = {"type": "ephemeral"}


@asynccontextmanager
async def claude(endpoint: ProviderEndpoint, **options: Any) -> AsyncIterator[AnthropicChatModel]:
    """An Anthropic model whose SDK client is closed while the event loop still runs (toolsift's own
    search unless told otherwise: a model name that says nothing gets no tool search by default)."""
    async with anthropic.AsyncAnthropic(api_key="k", base_url=endpoint.url, max_retries=0) as client:
        yield AnthropicChatModel("claude-x", client=client, **{"tool_search": "client", **options})


@asynccontextmanager
async def gpt(endpoint: ProviderEndpoint, **options: Any) -> AsyncIterator[OpenAIChatModel]:
    async with openai.AsyncOpenAI(api_key="k", base_url=endpoint.url + "/v1", max_retries=0) as client:
        yield OpenAIChatModel("gpt-x", client=client, **options)


@tool(read_only=True)
async def lookup(key: str) -> str:
    """Look a key up in the reference table."""
    return f"value of {key}"


def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register(lookup)
    return reg


def fits_anthropic(body: dict[str, Any]) -> dict[str, Any]:
    assert problems(body, MessageCreateParamsNonStreaming) == []
    return body


def breakpoints(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(breakpoints(v) for v in value.values())
    if isinstance(value, list):
        return sum(breakpoints(v) for v in value)
    return 0


def schema(name: str, words: int = 10) -> dict[str, Any]:
    return {
        "name": name,
        "description": " ".join(["describes"] * words),
        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
    }


def text_turn(role: str, text: str, *, mark: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if mark:
        block["cache_control"] = BREAKPOINT
    return {"role": role, "content": [block]}


# -- the cache model ------------------------------------------------------------------------------


def test_anthropic_cache_writes_at_breakpoints_and_reads_them_back() -> None:
    cache: set[str] = set()
    body = {
        "tools": [{**schema("a", 2000), "cache_control": BREAKPOINT}],
        "messages": [text_turn("user", "hello", mark=True)],
    }
    first = anthropic_usage(body, cache)
    assert first.cache_read == 0 and first.cache_write == first.input_tokens > 1024
    again = anthropic_usage(body, cache)
    assert again.cache_read == first.input_tokens and again.cache_write == 0 and again.cost < first.cost / 9
    # A changed tool changes every block after it: nothing is read.
    changed = {**body, "tools": [{**schema("b", 2000), "cache_control": BREAKPOINT}]}
    assert anthropic_usage(changed, cache).cache_read == 0


def test_anthropic_cache_looks_back_twenty_blocks_from_a_breakpoint() -> None:
    system = [{"type": "text", "text": "rules " * 2000}]
    turns = [text_turn("user" if i % 2 == 0 else "assistant", f"turn {i}") for i in range(41)]

    def body(marked: int, count: int) -> dict[str, Any]:
        messages = [dict(t) for t in turns[:count]]
        messages[marked] = text_turn(messages[marked]["role"], f"turn {marked}", mark=True)
        return {"system": system, "messages": messages}

    cache: set[str] = set()
    written = anthropic_usage(body(0, 1), cache)
    # The entry written at turn 0 is the 20th block back from turn 19 (a hit), the 21st from turn 20.
    assert anthropic_usage(body(19, 20), set(cache)).cache_read == written.input_tokens
    assert anthropic_usage(body(20, 21), set(cache)).cache_read == 0


def test_anthropic_prefix_below_the_minimum_is_not_cached() -> None:
    cache: set[str] = set()
    body = {"system": [{"type": "text", "text": "short", "cache_control": BREAKPOINT}], "messages": []}
    assert anthropic_usage(body, cache).cache_write == 0
    assert anthropic_usage(body, cache).cache_read == 0 and not cache


def test_deferred_tools_stay_out_of_the_prefix_until_a_reference_loads_them() -> None:
    shown = {**schema("shown", 2000), "cache_control": BREAKPOINT}
    hidden = {**schema("hidden", 500), "defer_loading": True}
    cache: set[str] = set()
    first = anthropic_usage({"tools": [shown], "messages": [text_turn("user", "q")]}, cache)
    with_deferred = anthropic_usage({"tools": [shown, hidden], "messages": [text_turn("user", "q")]}, cache)
    assert with_deferred.cache_read == first.cache_write and with_deferred.tool_tokens == first.tool_tokens
    result = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [{"type": "tool_reference", "tool_name": "hidden"}],
    }
    referenced = anthropic_usage(
        {"tools": [shown, hidden], "messages": [text_turn("user", "q"), {"role": "user", "content": [result]}]}, cache
    )
    loaded = count_tokens('{"description":' + '"' + " ".join(["describes"] * 500))
    assert referenced.tool_tokens - first.tool_tokens >= loaded
    assert referenced.cache_read == first.cache_write


def test_openai_cache_counts_the_shared_prefix_in_128_token_steps() -> None:
    shared = "x" * (4 * 1200)  # 1,200 tokens by the bytes/4 estimate (or about as many by tiktoken)
    assert openai_cached_tokens(shared + "tail", []) == 0
    cached = openai_cached_tokens(shared + "new tail", [shared + "old tail"])
    tokens = count_tokens(shared)
    assert cached == 1024 + (tokens - 1024) // 128 * 128 and cached % 128 == 0
    assert openai_cached_tokens("y" * 4000 + "a", ["y" * 4000 + "b"]) == 0  # under 1,024 tokens


async def test_endpoint_answers_errors_in_the_provider_shape_and_when_the_script_runs_out() -> None:
    async with ProviderEndpoint([ErrorReply(429, "slow down")]) as endpoint, claude(endpoint) as model:
        with pytest.raises(AgentError, match="slow down"):
            await model.complete("", [UserMessage("hi")], [])
        with pytest.raises(AgentError, match="no reply left"):
            await model.complete("", [UserMessage("hi")], [])
        assert [r.api for r in await endpoint.wait_for_requests(2)] == ["anthropic", "anthropic"]


# -- the Anthropic adapter ------------------------------------------------------------------------------


async def test_anthropic_breakpoints_let_each_round_read_the_whole_previous_prompt() -> None:
    # Twelve parallel calls: the answer and its results are 25 blocks, past the 20-block lookback.
    calls = tuple(Call("lookup", {"key": f"k{i}"}) for i in range(12))
    script = [Reply(calls=calls), Reply(calls=calls[:1]), Reply(text="done")]
    async with ProviderEndpoint(script) as endpoint, claude(endpoint) as model:
        conversation = Conversation(registry(), instructions="Answer from the table. " * 300)
        reply = await conversation.send("What are k0..k11?", model)
        first, second, third = await endpoint.wait_for_requests(3)
    assert reply.text == "done" and reply.rounds == 2
    assert second.usage.cache_read == first.usage.input_tokens
    assert third.usage.cache_read == second.usage.input_tokens
    for request in (first, second, third):
        fits_anthropic(request.body)
        assert breakpoints(request.body) <= 4
    assert breakpoints(third.body) == 4
    answers = [m.usage for m in conversation.history if isinstance(m, AssistantMessage)]
    assert answers[2] is not None and answers[2].cache_read_tokens == second.usage.input_tokens
    assert answers[2].input_tokens == third.usage.input_tokens and answers[2].cache_write_tokens > 0


@pytest.mark.parametrize("instructions", ["Answer from the table.", ""])
async def test_anthropic_reads_an_earlier_tool_list_after_it_grew_past_the_lookback(instructions: str) -> None:
    # 30 tools, then 25 more appended at once (a skill's tools put up front): the last tool's breakpoint
    # alone would look back 20 blocks and miss the entry the first request wrote at tool 30.
    first_tools = [schema(f"t{i}", 60) for i in range(30)]
    grown = first_tools + [schema(f"s{i}", 60) for i in range(25)]
    async with ProviderEndpoint([Reply(text="a"), Reply(text="b")]) as endpoint, claude(endpoint) as model:
        await model.complete(instructions, [UserMessage("hi")], first_tools)
        await model.complete(instructions, [UserMessage("hi")], grown)
        _, second = await endpoint.wait_for_requests(2)
    marked = [i for i, t in enumerate(second.body["tools"]) if "cache_control" in t]
    assert marked == ([29] if instructions else [29, 54])
    assert breakpoints(fits_anthropic(second.body)) <= 4
    tool_tokens = sum(count_tokens(json.dumps(t, separators=(",", ":"))) for t in first_tools)
    assert second.usage.cache_read >= tool_tokens > 1024


async def test_anthropic_reads_an_earlier_prompt_when_its_tool_list_comes_back() -> None:
    # A skill's tools for 15 rounds (30 blocks), then the first tool list again (/unuse): the request
    # starts with the whole first prompt, beyond the 20-block reach of its own message breakpoints.
    first_tools, skill_tools = [schema(f"t{i}", 60) for i in range(10)], [schema(f"s{i}", 60) for i in range(10)]
    opening: list[Message] = [UserMessage("background " * 400)]
    rounds: list[Message] = []
    for i in range(15):
        rounds += [AssistantMessage(text=f"answer {i}"), UserMessage(f"question {i}")]
    script = [Reply(text="a"), Reply(text="b"), Reply(text="c")]
    async with ProviderEndpoint(script) as endpoint, claude(endpoint) as model:
        await model.complete("Answer briefly.", opening, first_tools)
        await model.complete("Answer briefly.", opening + rounds, skill_tools)
        await model.complete("Answer briefly.", opening + rounds, first_tools)
        first, _, back = await endpoint.wait_for_requests(3)
    assert back.usage.cache_read == first.usage.input_tokens  # not only the tools and the system prompt
    assert breakpoints(fits_anthropic(back.body)) == 4
    assert "cache_control" in back.body["messages"][0]["content"][-1]  # where the first request's entry ends
    assert "cache_control" not in back.body["tools"][-1]  # the earliest breakpoint gave its place


async def test_anthropic_without_cache_marks_nothing() -> None:
    async with ProviderEndpoint([Reply(text="a")]) as endpoint, claude(endpoint, cache=False) as model:
        await model.complete("sys", [UserMessage("hi")], [schema("t")])
    assert breakpoints(endpoint.requests[0].body) == 0


def test_context_joins_the_user_turn_and_tool_results_come_first() -> None:
    call, other = ToolCall("c1", "lookup", {"key": "a"}), ToolCall("c2", "lookup", {"key": "b"})
    history: list[Message] = [
        UserMessage("q"),
        AssistantMessage(None, (call, other)),
        ToolMessage(call, ToolResult.text("1")),
        ContextMessage("Use the table.", source="skill:table"),
        ToolMessage(other, ToolResult.text("2")),
        UserMessage("next"),
    ]
    messages = to_anthropic_messages(history)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["type"] for b in messages[2]["content"]] == ["tool_result", "tool_result", "text", "text"]
    assert messages[2]["content"][2]["text"] == "[Context (skill:table)]\nUse the table."
    assert to_anthropic_messages([ContextMessage("c"), UserMessage("u")]) == [
        {"role": "user", "content": [{"type": "text", "text": "[Context]\nc"}, {"type": "text", "text": "u"}]}
    ]


def test_anthropic_request_never_changes_the_callers_schemas() -> None:
    tools = [schema("a")]
    history = [UserMessage("q")]
    model = AnthropicChatModel("claude-x", api_key="k")
    request = model.request("sys", history, tools, [schema("b")])
    assert request["tools"][0]["cache_control"] == BREAKPOINT and "cache_control" not in tools[0]
    assert "defer_loading" not in schema("b") and request["tools"][1]["defer_loading"] is True


async def test_client_tool_search_defers_tools_and_references_load_them() -> None:
    call = ToolCall("c1", "search_tools", {"query": "lookup"})
    history: list[Message] = [
        UserMessage("find a tool"),
        AssistantMessage(None, (call,)),
        ToolMessage(call, ToolResult.text("found lookup, stray"), references=("lookup", "stray", "search_tools")),
    ]
    async with ProviderEndpoint([Reply(text="ok"), Reply(text="ok")]) as endpoint:
        async with claude(endpoint) as model:
            assert model.defers_tools
            await model.complete("sys", history, [schema("search_tools")], deferred=[schema("lookup"), schema("other")])
        async with claude(endpoint, tool_search=None) as off:
            assert not off.defers_tools
            await off.complete("sys", history, [schema("search_tools")], deferred=[schema("lookup")])
    client, plain = (fits_anthropic(r.body) for r in endpoint.requests)
    assert [(t["name"], t.get("defer_loading", False)) for t in client["tools"]] == [
        ("search_tools", False),
        ("lookup", True),
        ("other", True),
    ]
    assert client["tools"][0]["cache_control"] == BREAKPOINT
    result = client["messages"][-1]["content"][0]
    # Only deferred tools are referenced: "stray" is not defined, search_tools is loaded already.
    assert result["content"][-1] == {"type": "tool_reference", "tool_name": "lookup"}
    assert result["cache_control"] == BREAKPOINT
    assert [b["type"] for b in result["content"]] == ["text", "tool_reference"]
    assert [t["name"] for t in plain["tools"]] == ["search_tools"]
    assert [b["type"] for b in plain["messages"][-1]["content"][0]["content"]] == ["text"]


@pytest.mark.parametrize(
    ("mode", "server_tool"), [("bm25", "tool_search_tool_bm25"), ("regex", "tool_search_tool_regex")]
)
async def test_server_tool_search_adds_anthropics_search_tool(mode: str, server_tool: str) -> None:
    async with ProviderEndpoint([Reply(text="ok")]) as endpoint, claude(endpoint, tool_search=mode) as model:
        await model.complete("sys", [UserMessage("q")], [schema("search_tools")], deferred=[schema("lookup")])
    body = fits_anthropic(endpoint.requests[0].body)
    assert [t["name"] for t in body["tools"]] == ["search_tools", server_tool, "lookup"]
    assert body["tools"][1] == {"type": f"{server_tool}_20251119", "name": server_tool, "cache_control": BREAKPOINT}


def test_tool_search_mode_is_checked() -> None:
    with pytest.raises(AgentError, match="tool_search must be 'client', 'bm25', 'regex' or None, not 'vector'"):
        AnthropicChatModel("claude-x", api_key="k", tool_search="vector")  # type: ignore[arg-type]


async def test_server_side_search_blocks_come_back_verbatim() -> None:
    search = (
        {"type": "text", "text": "Let me look."},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25", "input": {"query": "lookup"}},
        {
            "type": "tool_search_tool_result",
            "tool_use_id": "srvtoolu_1",
            "content": {
                "type": "tool_search_tool_search_result",
                "tool_references": [{"type": "tool_reference", "tool_name": "lookup"}],
            },
        },
    )
    script = [Reply(blocks=search, calls=(Call("lookup", {"key": "a"}),)), Reply(text="value of a")]
    async with ProviderEndpoint(script) as endpoint, claude(endpoint, tool_search="bm25") as model:
        history: list[Any] = [UserMessage("a?")]
        answer = await model.complete("sys", history, [], deferred=[schema("lookup", 2000)])
        assert answer.tool_calls[0].name == "lookup" and answer.text == "Let me look."
        assert [b["type"] for b in answer.provider_blocks] == [b["type"] for b in search] + ["tool_use"]
        history += [answer, ToolMessage(answer.tool_calls[0], ToolResult.text("value of a"))]
        await model.complete("sys", history, [], deferred=[schema("lookup", 2000)])
    first, second = (r for r in endpoint.requests)
    echoed = fits_anthropic(second.body)["messages"][1]["content"]
    assert echoed[:3] == list(search) and echoed[3]["type"] == "tool_use"
    assert second.usage.tool_tokens > first.usage.tool_tokens  # the reference loaded lookup's definition


async def test_the_endpoint_runs_anthropics_server_search_for_a_deferred_tool_the_model_calls() -> None:
    """A model with a server-side search loads a deferred tool before its first call, within the same answer."""
    script = [Reply(calls=(Call("lookup", {"key": "a"}),)), Reply(calls=(Call("lookup", {"key": "b"}),))]
    async with ProviderEndpoint(script) as endpoint, claude(endpoint, tool_search="regex") as model:
        history: list[Any] = [UserMessage("a?")]
        first = await model.complete("sys", history, [], deferred=[schema("lookup", 2000)])
        history += [first, ToolMessage(first.tool_calls[0], ToolResult.text("value of a"))]
        second = await model.complete("sys", history, [], deferred=[schema("lookup", 2000)])
    use, result, call = first.provider_blocks
    assert (use["type"], use["name"], result["type"]) == (
        "server_tool_use",
        "tool_search_tool_regex",
        "tool_search_tool_result",
    )
    assert result["tool_use_id"] == use["id"] and call["type"] == "tool_use"
    assert result["content"]["tool_references"] == [{"type": "tool_reference", "tool_name": "lookup"}]
    # Loaded once: the next call of the same tool needs no search, and the next request carries its definition.
    assert not second.provider_blocks and second.tool_calls[0].name == "lookup"
    assert endpoint.requests[0].usage.loaded_tokens == 0 and endpoint.requests[1].usage.loaded_tokens > 2000


# -- the Chat Completions adapter -----------------------------------------------------------------------


async def test_openai_usage_reports_what_the_cache_served() -> None:
    async with (
        ProviderEndpoint([Reply(text="one"), Reply(text="two")]) as endpoint,
        gpt(endpoint, prompt_cache_key="conv-1") as model,
    ):
        history: list[Any] = [UserMessage("first")]
        instructions = "Follow the house rules. " * 400
        first = await model.complete(instructions, history, [])
        history += [first, ContextMessage("Skill text.", source="skill:pdf"), UserMessage("second")]
        second = await model.complete(instructions, history, [])
    assert first.usage is not None and first.usage.cache_read_tokens == 0
    assert second.usage is not None and second.usage.cache_read_tokens == endpoint.requests[1].usage.cache_read > 1024
    assert second.usage.input_tokens == endpoint.requests[1].usage.input_tokens
    body = endpoint.requests[1].body
    assert problems(body, CompletionCreateParamsNonStreaming) == []
    assert body["prompt_cache_key"] == "conv-1"
    assert body["messages"][-2] == {"role": "user", "content": "[Context (skill:pdf)]\nSkill text."}


def test_context_stays_a_user_message_of_its_own_for_openai() -> None:
    messages = to_openai_messages(
        "sys", [UserMessage("q"), AssistantMessage("a"), ContextMessage("c"), UserMessage("u")]
    )
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "user"]
    assert messages[3]["content"] == "[Context]\nc"


def test_prompt_cache_key_is_drawn_only_for_api_openai_com() -> None:
    hosted, other = OpenAIChatModel("gpt-x", api_key="k"), OpenAIChatModel("gpt-x", api_key="k")
    assert hosted.prompt_cache_key and hosted.prompt_cache_key.startswith("toolsift-")
    assert hosted.prompt_cache_key != other.prompt_cache_key
    assert OpenAIChatModel("gpt-x", api_key="k", prompt_cache_key=False).prompt_cache_key is None
    assert OpenAIChatModel("local", api_key="k", base_url="http://127.0.0.1:1/v1").prompt_cache_key is None
    given = OpenAIChatModel("local", api_key="k", base_url="http://127.0.0.1:1/v1", prompt_cache_key="mine")
    assert given.prompt_cache_key == "mine"
