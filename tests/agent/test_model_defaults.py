"""Defaults are the best a model allows, read from its name; a refused feature falls back with one log line."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from toolsift import AgentError
from toolsift.agent import UserMessage
from toolsift.agent.llm._models import anthropic_features, responses_features
from toolsift.agent.llm.anthropic import AnthropicChatModel
from toolsift.agent.llm.openai_responses import OpenAIResponsesModel

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _provider import ErrorReply, ProviderEndpoint, Reply, Request


@pytest.mark.parametrize(
    ("model", "tool_search", "mid_conversation"),
    [
        ("claude-sonnet-5-5", True, True),
        ("claude-sonnet-5-5-20260901", True, True),
        ("claude-sonnet-5", True, False),  # no mid-conversation system messages on Sonnet 5
        ("claude-opus-4-8", True, True),
        ("claude-opus-4-7", True, False),
        ("claude-haiku-4-5", True, False),
        ("claude-mythos-5", True, True),
        ("claude-sonnet-4-20250514", False, False),
        ("claude-3-5-sonnet-20241022", False, False),
        ("my-local-model", False, False),
    ],
)
def test_what_a_claude_model_offers_is_read_from_its_name(
    model: str, tool_search: bool, mid_conversation: bool
) -> None:
    features = anthropic_features(model)
    assert (features.tool_search, features.mid_conversation) == (tool_search, mid_conversation)


@pytest.mark.parametrize(
    ("model", "newest"),
    [
        ("gpt-5.4", True),
        ("gpt-5.6-terra", True),
        ("gpt-6", True),
        ("gpt-5-mini", False),
        ("gpt-4.1", False),
        ("llama3", False),
    ],
)
def test_what_an_openai_model_offers_is_read_from_its_name(model: str, newest: bool) -> None:
    features = responses_features(model)
    assert (features.tool_search, features.mid_conversation) == (newest, newest)


def test_a_plain_model_name_gets_the_best_setting_and_a_flag_opts_out() -> None:
    best = AnthropicChatModel("claude-sonnet-5-5", api_key="k")
    assert (best.tool_search, best.loads_on_demand, best.defers_tools) == ("bm25", True, True)
    older = AnthropicChatModel("claude-3-5-sonnet-20241022", api_key="k")
    assert (older.tool_search, older.loads_on_demand, older.defers_tools) == (None, False, False)
    kept = AnthropicChatModel("claude-sonnet-5-5", api_key="k", on_demand=False)
    assert (kept.tool_search, kept.loads_on_demand) == ("bm25", False)
    client = AnthropicChatModel("claude-sonnet-5-5", api_key="k", tool_search="client")
    assert (client.tool_search, client.loads_on_demand) == ("client", False)
    asked = AnthropicChatModel("my-proxy", api_key="k", on_demand=True)  # asking for on-demand asks for the search
    assert (asked.tool_search, asked.loads_on_demand) == ("bm25", True)
    gpt = OpenAIResponsesModel("gpt-5.4", api_key="k")
    assert (gpt.tool_search, gpt.loads_on_demand, gpt.defers_tools) == ("server", True, True)
    old = OpenAIResponsesModel("gpt-4.1", api_key="k")
    assert (old.tool_search, old.loads_on_demand, old.defers_tools) == (None, False, False)
    off = OpenAIResponsesModel("gpt-5.4", api_key="k", on_demand=False)
    assert (off.tool_search, off.loads_on_demand) == ("server", False)


def refuse(search_type: str, status: int = 400) -> Any:
    """A script that refuses every request declaring a tool of ``search_type``, and answers the others."""

    def pick(request: Request) -> Reply | ErrorReply:
        if any(str(t.get("type", "")).startswith(search_type) for t in request.body.get("tools") or []):
            return ErrorReply(status, f"tools: unknown tool type {search_type!r}")
        return Reply(text="ok")

    return pick


TOOLS = [{"name": "echo", "description": "Echo.", "input_schema": {"type": "object", "properties": {}}}]
DEFERRED = [{"name": "lookup", "description": "Look up.", "input_schema": {"type": "object", "properties": {}}}]


async def test_an_endpoint_that_refuses_anthropics_search_gets_every_tool_up_front_after_one_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="toolsift.agent.llm")
    async with (
        ProviderEndpoint(refuse("tool_search_tool_")) as endpoint,
        anthropic.AsyncAnthropic(api_key="k", base_url=endpoint.url, max_retries=0) as client,
    ):
        model = AnthropicChatModel("claude-sonnet-5-5", client=client)
        first = await model.complete("sys", [UserMessage("hi")], TOOLS, deferred=DEFERRED)
        second = await model.complete("sys", [UserMessage("hi")], TOOLS, deferred=DEFERRED)
    assert first.text == second.text == "ok"
    refused, retried, later = (r.body for r in endpoint.requests)
    assert any(t.get("defer_loading") for t in refused["tools"])
    assert [t["name"] for t in retried["tools"]] == ["echo", "lookup"] and not any(
        "defer_loading" in t for t in retried["tools"]
    )
    assert [t["name"] for t in later["tools"]] == ["echo"]  # the model defers nothing from then on
    assert not model.defers_tools and not model.loads_on_demand
    (line,) = [r.getMessage() for r in caplog.records]
    assert "Anthropic model 'claude-sonnet-5-5' refused tool search (bm25)" in line and "goes on without it" in line


async def test_an_openai_compatible_server_that_refuses_deferred_tools_gets_them_up_front(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="toolsift.agent.llm")
    functions = [{"type": "function", "name": "echo", "parameters": {"type": "object", "properties": {}}}]
    deferred = [{"type": "function", "name": "srv__lookup", "parameters": {"type": "object", "properties": {}}}]
    async with (
        ProviderEndpoint(refuse("tool_search", status=422)) as endpoint,
        openai.AsyncOpenAI(api_key="k", base_url=endpoint.url + "/v1", max_retries=0) as client,
    ):
        model = OpenAIResponsesModel("gpt-5.4", client=client)
        answer = await model.complete("sys", [UserMessage("hi")], functions, deferred=deferred)
    assert answer.text == "ok" and not model.defers_tools
    retried = endpoint.requests[1].body
    assert [t["name"] for t in retried["tools"]] == ["echo", "srv__lookup"]
    (line,) = [r.getMessage() for r in caplog.records]
    assert "OpenAI model 'gpt-5.4' refused deferred tools (tool_search='server')" in line


async def test_a_refusal_that_is_not_about_the_feature_is_still_an_error(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="toolsift.agent.llm")
    script = lambda request: ErrorReply(400, "messages: roles must alternate")  # noqa: E731
    async with (
        ProviderEndpoint(script) as endpoint,
        anthropic.AsyncAnthropic(api_key="k", base_url=endpoint.url, max_retries=0) as client,
    ):
        model = AnthropicChatModel("claude-sonnet-5-5", client=client)
        with pytest.raises(AgentError, match="roles must alternate"):
            await model.complete("sys", [UserMessage("hi")], TOOLS, deferred=DEFERRED)
        with pytest.raises(AgentError, match="roles must alternate"):
            await model.complete("sys", [UserMessage("hi")], TOOLS)  # nothing to fall back from
    assert len(endpoint.requests) == 3 and model.loads_on_demand and not caplog.records
