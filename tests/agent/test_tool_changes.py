"""Mid-conversation system messages and tool changes on Anthropic, and the loopback provider's rules for them."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming as BetaParams
from sdk_shapes import problems

from toolsift import AgentError
from toolsift.agent import AssistantMessage, ContextMessage, Message, UserMessage
from toolsift.agent.llm.anthropic import TOOL_CHANGES_BETA, AnthropicChatModel, to_anthropic_messages

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _provider import Call, ErrorReply, ProviderEndpoint, Reply, Request, anthropic_usage
from _tool_changes import refused_change

ECHO = {"name": "echo", "description": "Echo.", "input_schema": {"type": "object", "properties": {}}}
LOOKUP = {"name": "lookup", "description": "Look " * 50, "input_schema": {"type": "object", "properties": {}}}


def withdrawn(*names: str) -> ContextMessage:
    return ContextMessage(f"Withdrawn: {', '.join(names)}.", source="tools", withdrawn=names)


def test_context_after_the_first_message_is_a_system_message_with_its_tool_changes() -> None:
    history: list[Message] = [
        ContextMessage("server notes", source="server:s"),  # first: a user turn, as the API starts with one
        UserMessage("hi"),
        AssistantMessage("hello"),
        withdrawn("lookup"),
        ContextMessage("Skill gives lookup again.", source="skill:s", added=("lookup",)),
        UserMessage("go"),
    ]
    messages = to_anthropic_messages(history, system_messages=True)
    assert [m["role"] for m in messages] == ["user", "assistant", "system", "system", "user"]
    assert messages[2]["content"][1] == {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "lookup"}}
    assert messages[3]["content"][1] == {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "lookup"}}
    body = {"model": "m", "max_tokens": 5, "messages": messages, "tools": [ECHO]}
    assert problems(body, BetaParams) == []
    # A model without them gets the same context as user text.
    plain = to_anthropic_messages(history)
    assert [m["role"] for m in plain] == ["user", "assistant", "user"] and "Withdrawn: lookup." in str(plain[2])


def test_the_loopback_refuses_tool_changes_without_their_beta_or_naming_an_undefined_tool() -> None:
    removal = {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "x"}}
    body = {"tools": [{"name": "x"}], "messages": [{"role": "system", "content": [removal]}]}
    beta = f"other-beta, {TOOL_CHANGES_BETA}"
    assert (
        refused_change(body, "")
        == f"messages: tool_removal blocks need the anthropic-beta header {TOOL_CHANGES_BETA!r}"
    )
    assert refused_change(body, beta) is None
    undefined = {**body, "tools": [{"name": "y"}]}
    assert (
        refused_change(undefined, beta) == "messages: tool_removal names 'x', which the request's tools do not define"
    )
    assert refused_change({"messages": [{"role": "user", "content": "hi"}]}, "") is None


def test_a_tool_change_is_sent_only_for_a_tool_the_request_defines() -> None:
    history: list[Message] = [UserMessage("hi"), AssistantMessage("hello"), withdrawn("lookup", "gone")]
    messages = to_anthropic_messages(history, system_messages=True, defined=frozenset({"lookup"}))
    assert [block["type"] for block in messages[-1]["content"]] == ["text", "tool_removal"]
    assert messages[-1]["content"][1]["tool"]["name"] == "lookup"


def test_a_withdrawn_tool_leaves_the_offered_tools_and_an_addition_offers_it_again() -> None:
    def body(*changes: dict[str, Any]) -> dict[str, Any]:
        loaded = {
            "type": "tool_result",
            "tool_use_id": "t",
            "content": [{"type": "tool_reference", "tool_name": "lookup"}],
        }
        messages = [{"role": "user", "content": [loaded]}, *({"role": "system", "content": [c]} for c in changes)]
        return {"tools": [ECHO, {**LOOKUP, "defer_loading": True}], "messages": messages}

    def change(kind: str, name: str) -> dict[str, Any]:
        return {"type": kind, "tool": {"type": "tool_reference", "name": name}}

    loaded = anthropic_usage(body(), set())
    removed = anthropic_usage(body(change("tool_removal", "lookup"), change("tool_removal", "echo")), set())
    again = anthropic_usage(body(change("tool_removal", "lookup"), change("tool_addition", "lookup")), set())
    assert loaded.loaded_tokens > 50 and loaded.tool_tokens > loaded.loaded_tokens
    assert removed.tool_tokens == removed.loaded_tokens == 0  # nothing offered, though the bytes are still read
    assert removed.input_tokens > loaded.input_tokens
    assert again.loaded_tokens == loaded.loaded_tokens  # loaded again at the addition


async def test_the_adapter_sends_the_beta_and_a_withdrawn_tool_cannot_be_called() -> None:
    history: list[Message] = [UserMessage("hi"), AssistantMessage("hello"), withdrawn("lookup"), UserMessage("look")]
    script = [Reply(text="ok"), Reply(calls=(Call("lookup"),))]
    async with (
        ProviderEndpoint(script) as endpoint,
        anthropic.AsyncAnthropic(api_key="k", base_url=endpoint.url, max_retries=0) as client,
    ):
        model = AnthropicChatModel("claude-sonnet-5-5", client=client)
        assert model.mid_conversation
        answer = await model.complete("sys", history, [ECHO], deferred=[LOOKUP])
        with pytest.raises(AgentError, match="calls 'lookup', which a tool_removal withdrew"):
            await model.complete("sys", history, [ECHO], deferred=[LOOKUP])
    assert answer.text == "ok"  # the loopback took it: the beta header came with it
    sent = endpoint.requests[0].body
    assert sent["messages"][2]["role"] == "system" and problems(sent, BetaParams) == []
    assert not AnthropicChatModel("claude-sonnet-5", api_key="k").mid_conversation  # Sonnet 5 has no system messages
    assert not AnthropicChatModel("claude-sonnet-5-5", api_key="k", mid_conversation=False).mid_conversation


async def test_an_endpoint_that_refuses_system_messages_gets_user_text_after_one_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="toolsift.agent.llm")

    def refuse_system(request: Request) -> Reply | ErrorReply:
        if any(m["role"] == "system" for m in request.body["messages"]):
            return ErrorReply(400, "messages.2.role: Input should be 'user' or 'assistant'")
        return Reply(text="ok")

    history: list[Message] = [UserMessage("hi"), AssistantMessage("hello"), withdrawn("lookup"), UserMessage("look")]
    async with (
        ProviderEndpoint(refuse_system) as endpoint,
        anthropic.AsyncAnthropic(api_key="k", base_url=endpoint.url, max_retries=0) as client,
    ):
        model = AnthropicChatModel("claude-sonnet-5-5", client=client)
        answer = await model.complete("sys", history, [ECHO], deferred=[LOOKUP])
    assert answer.text == "ok" and not model.mid_conversation and model.loads_on_demand  # the search stays
    assert [m["role"] for m in endpoint.requests[1].body["messages"]] == ["user", "assistant", "user"]
    (line,) = [r.getMessage() for r in caplog.records]
    assert "refused mid-conversation system messages" in line
