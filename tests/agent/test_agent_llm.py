"""LLM adapters against a loopback stub that replays recorded provider replies."""

from __future__ import annotations

import mcp.types as mcp_types
import pytest
from llm_stub import llm_stub, recorded

from toolsift import AgentError
from toolsift.agent import AssistantMessage, Conversation, ToolCall, ToolMessage, Usage, UserMessage
from toolsift.agent.llm import load_model
from toolsift.agent.llm.anthropic import AnthropicChatModel, to_anthropic_messages
from toolsift.agent.llm.openai import OpenAIChatModel, _arguments, to_openai_messages
from toolsift.registry import ToolRegistry, ToolResult, tool


@tool(read_only=True)
async def word_count(text: str) -> int:
    """Count the words in a text."""
    return len(text.split())


def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register(word_count)
    return reg


async def test_openai_adapter_runs_the_tool_loop_against_recorded_replies() -> None:
    with llm_stub((200, recorded("openai_tool_call.json")), (200, recorded("openai_final.json"))) as stub:
        model = OpenAIChatModel("gpt-4.1-mini", api_key="sk-test", base_url=stub.url + "/v1")
        conversation = Conversation(registry(), instructions="Be brief.")
        reply = await conversation.send("How many words in 'the quick brown fox'?", model)
    assert reply.text == "The text has 4 words." and reply.rounds == 1
    assert reply.tool_calls[0].result.text_content() == "4"
    first, second = stub.requests
    assert stub.paths == ["/v1/chat/completions"] * 2
    assert first["tools"][0]["function"]["name"] == "word_count"
    assert first["messages"][0] == {"role": "system", "content": "Be brief."}
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_Q1w2E3r4", "content": "4"}
    assert second["messages"][-2]["tool_calls"][0]["function"]["arguments"] == '{"text": "the quick brown fox"}'


async def test_anthropic_adapter_runs_the_tool_loop_against_recorded_replies() -> None:
    with llm_stub((200, recorded("anthropic_tool_use.json")), (200, recorded("anthropic_final.json"))) as stub:
        model = AnthropicChatModel("claude-sonnet-5-5", api_key="sk-ant-test", base_url=stub.url)
        conversation = Conversation(registry(), instructions="Be brief.")
        reply = await conversation.send("How many words?", model)
    assert reply.text == "The text has 4 words."
    first, second = stub.requests
    assert stub.paths == ["/v1/messages"] * 2
    breakpoint = {"type": "ephemeral"}
    assert first["system"] == [{"type": "text", "text": "Be brief.", "cache_control": breakpoint}]
    assert first["tools"][0]["name"] == "word_count" and first["tools"][0]["cache_control"] == breakpoint
    assert first["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "How many words?", "cache_control": breakpoint}]}
    ]
    assert first["tools"][0]["input_schema"]["required"] == ["text"]
    result_turn = second["messages"][-1]
    assert result_turn["role"] == "user"
    assert result_turn["content"][0]["tool_use_id"] == "toolu_01A09q90qw90lq917835lq9"
    assert result_turn["content"][0]["content"] == [{"type": "text", "text": "4"}]


async def test_usage_of_recorded_replies_without_cache_figures() -> None:
    with llm_stub((200, recorded("anthropic_final.json")), (200, recorded("openai_final.json"))) as stub:
        claude = AnthropicChatModel("claude-sonnet-5-5", api_key="k", base_url=stub.url)
        gpt = OpenAIChatModel("gpt-4.1-mini", api_key="k", base_url=stub.url + "/v1")
        sonnet = pytest.approx((530 * 2 + 12 * 10) / 1e6)
        assert (await claude.complete("", [UserMessage("hi")], [])).usage == Usage(530, 0, 0, 12, cost=sonnet)
        mini = pytest.approx((130 * 0.4 + 8 * 1.6) / 1e6)
        assert (await gpt.complete("", [UserMessage("hi")], [])).usage == Usage(130, 0, 0, 8, cost=mini)


async def test_usage_counts_cache_reads_and_writes_as_input() -> None:
    cached = {
        "input_tokens": 30,
        "cache_read_input_tokens": 2000,
        "cache_creation_input_tokens": 500,
        "output_tokens": 7,
    }
    details = {"prompt_tokens": 2530, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 2048}}
    replies = (
        (200, {**recorded("anthropic_final.json"), "usage": cached}),
        (200, {**recorded("openai_final.json"), "usage": details}),
    )
    with llm_stub(*replies) as stub:
        claude = AnthropicChatModel("claude-sonnet-5-5", api_key="k", base_url=stub.url)
        gpt = OpenAIChatModel("gpt-4.1-mini", api_key="k", base_url=stub.url + "/v1")
        first = (await claude.complete("", [UserMessage("hi")], [])).usage
        second = (await gpt.complete("", [UserMessage("hi")], [])).usage
    # The shipped prices: Sonnet 5.5 $2 in, $0.10 read, $2.50 write, $10 out; GPT-4.1 mini $0.40, $0.10, $1.60.
    assert first == Usage(2530, 2000, 500, 7, cost=pytest.approx((30 * 2 + 2000 * 0.1 + 500 * 2.5 + 7 * 10) / 1e6))
    assert second == Usage(2530, 2048, 0, 7, cost=pytest.approx((482 * 0.4 + 2048 * 0.1 + 7 * 1.6) / 1e6))
    assert round(second.cached_share, 2) == 0.81


async def test_provider_errors_become_one_clear_agent_error() -> None:
    error = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
    with llm_stub((401, error)) as stub:
        model = OpenAIChatModel("gpt-4.1-mini", api_key="sk-bad", base_url=stub.url + "/v1")
        with pytest.raises(AgentError, match="OpenAI request to model 'gpt-4.1-mini' failed"):
            await Conversation(registry()).send("hi", model)
    anthropic_error = {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
    with llm_stub((401, anthropic_error)) as stub:
        claude = AnthropicChatModel("claude-x", api_key="bad", base_url=stub.url)
        with pytest.raises(AgentError, match="Anthropic request to model 'claude-x' failed"):
            await Conversation(registry()).send("hi", claude)


async def test_openai_reply_without_choices_is_an_error() -> None:
    with llm_stub((200, {**recorded("openai_final.json"), "choices": []})) as stub:
        model = OpenAIChatModel("m", api_key="k", base_url=stub.url + "/v1")
        with pytest.raises(AgentError, match="returned no choices"):
            await model.complete("", [UserMessage("hi")], [])


def test_load_model_checks_provider_package_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(AgentError, match="must look like provider:model"):
        load_model("gpt-4")
    with pytest.raises(AgentError, match="Unknown model provider 'mistral'; available: anthropic, openai"):
        load_model("mistral:large")
    with pytest.raises(AgentError, match="No API key for openai: set OPENAI_API_KEY"):
        load_model("openai:gpt-4.1-mini")
    with pytest.raises(AgentError, match="set ANTHROPIC_API_KEY"):
        load_model("anthropic:claude")
    assert isinstance(load_model("openai:local", base_url="http://127.0.0.1:1/v1"), OpenAIChatModel)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert load_model("anthropic:claude").format == "anthropic"


def test_load_model_names_the_missing_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "toolsift.agent.llm.anthropic", None)
    with pytest.raises(
        AgentError,
        match=r"pip install 'anthropic>=2.14' \(from a clone of toolsift: pip install -e '\.\[anthropic\]'\)",
    ):
        load_model("anthropic:claude", api_key="k")


def test_tool_results_convert_without_loss() -> None:
    result = ToolResult(
        content=[
            mcp_types.TextContent(text="hello"),
            mcp_types.ImageContent(data="aGVsbG8=", mime_type="image/png"),
            mcp_types.AudioContent(data="A" * 40000, mime_type="audio/wav"),
            mcp_types.EmbeddedResource(resource=mcp_types.TextResourceContents(uri="file:///a.txt", text="inline me")),
            mcp_types.EmbeddedResource(resource=mcp_types.BlobResourceContents(uri="file:///b.bin", blob="AAAA")),
            mcp_types.ResourceLink(uri="file:///c.md", name="c.md", mime_type="text/markdown"),
        ]
    )
    call = ToolCall("c1", "t", {})
    history = [UserMessage("q"), AssistantMessage(None, (call,)), ToolMessage(call, result)]
    openai_text = to_openai_messages("", history)[-1]["content"]
    for expected in (
        "hello",
        "[image result: image/png, 5 bytes]",
        "[audio result: audio/wav, 29 KB]",
        "[resource file:///a.txt]\ninline me",
        "[binary resource file:///b.bin: application/octet-stream",
        "[resource link: c.md file:///c.md, text/markdown]",
    ):
        assert expected in openai_text
    blocks = to_anthropic_messages(history)[-1]["content"][0]["content"]
    assert blocks[1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGVsbG8="}}
    assert "audio/wav" in blocks[2]["text"]


def test_empty_and_structured_results_still_say_something() -> None:
    from toolsift.agent import result_text

    assert result_text(ToolResult()) == "[empty result]"
    assert result_text(ToolResult(structured_content={"a": 1})) == '{"a": 1}'
    assert result_text(ToolResult(is_error=True)) == "[the tool reported an error without a message]"


def test_invalid_json_arguments_round_trip_as_text() -> None:
    call = ToolCall("c1", "t", "{not json")
    messages = to_openai_messages("", [AssistantMessage("x", (call,))])
    assert messages[0]["tool_calls"][0]["function"]["arguments"] == "{not json"
    assert to_anthropic_messages([AssistantMessage(None, (call,))])[0]["content"][0]["input"] == {"_raw": "{not json"}


def test_arguments_nested_past_the_parser_come_back_as_text() -> None:
    raw = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    call = ToolCall("c1", "t", raw)
    assert _arguments(raw) == raw and to_openai_messages("", [AssistantMessage("x", (call,))])
