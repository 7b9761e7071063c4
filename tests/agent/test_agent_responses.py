"""The OpenAI Responses adapter: wire shapes checked against the installed SDK's types (``sdk_shapes``),
requests sent through the real ``openai.AsyncOpenAI`` client to loopback endpoints: the provider endpoint
with OpenAI's cache model (``benchmarks/_provider.py``) and, for hand-made replies, ``llm_stub``.

What matters for the prompt cache: every request is the whole conversation (``store: false``), and the
next request starts with exactly the bytes of the previous one (tools, instructions, earlier items).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
import openai
import pytest
from llm_stub import llm_stub
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from openai.types.responses.response_input_item_param import ResponseInputItemParam
from sdk_shapes import problems

from toolsift import AgentError
from toolsift.agent import AssistantMessage, ContextMessage, Conversation, ToolCall, ToolMessage, Usage, UserMessage
from toolsift.agent.llm import load_model
from toolsift.agent.llm._responses_input import INPUT_FIELDS, to_responses_input
from toolsift.agent.llm._responses_tools import to_responses_tools
from toolsift.agent.llm.openai_responses import OpenAIResponsesModel
from toolsift.registry import ToolRegistry, ToolResult, tool
from toolsift.registry._internal import AuditEvent
from toolsift.toolbox import Toolbox

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _provider import Call, ProviderEndpoint, Reply

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "examples" / "servers"

#: Instructions past OpenAI's 1,024-token caching threshold.
LONG_INSTRUCTIONS = "Be brief. " + " ".join(f"Rule {n}: answer with facts you checked." for n in range(300))


@tool(read_only=True)
async def word_count(text: str) -> int:
    """Count the words in a text."""
    return len(text.split())


@tool(name="reports__" + "quarterly_revenue_summary_" * 3, read_only=True)
async def long_named(quarter: str) -> str:
    """A tool whose name is too long for OpenAI, so the model sees an alias."""
    return f"revenue of {quarter}"


def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register(word_count)
    reg.register(long_named)
    return reg


def response(*output: dict[str, Any], cached: int = 0, status: str = "completed") -> dict[str, Any]:
    """A Responses API reply as the API sends it."""
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1_790_000_000,
        "model": "gpt-5.4",
        "status": status,
        "output": list(output),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 2000,
            "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
            "output_tokens": 20,
            "output_tokens_details": {"reasoning_tokens": 8},
            "total_tokens": 2020,
        },
    }


def function_call(name: str, arguments: dict[str, Any], call_id: str = "call_1", **extra: Any) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
        **extra,
    }


def text(words: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": words, "annotations": []}],
    }


REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-opaque"}


@asynccontextmanager
async def responses_model(url: str, **options: Any) -> AsyncIterator[OpenAIResponsesModel]:
    """A model on a client this test closes (an open client left to the garbage collector outlives its loop)."""
    async with openai.AsyncOpenAI(api_key="k", base_url=url + "/v1", max_retries=0) as client:
        yield OpenAIResponsesModel("gpt-5.4", client=client, **options)


def check_request(request: dict[str, Any]) -> None:
    """The body fits the SDK's request type at every depth, with no unknown key."""
    assert problems(request, ResponseCreateParamsNonStreaming) == []


async def test_responses_model_runs_the_tool_loop_with_a_stable_cached_prefix() -> None:
    alias = registry().exported_name(long_named.spec.name, "openai-responses")
    assert alias != long_named.spec.name
    script = [Reply(blocks=(REASONING,), calls=(Call(alias, {"quarter": "Q3"}),)), Reply(text="Q3 was good.")]
    async with ProviderEndpoint(script) as endpoint, responses_model(endpoint.url, prompt_cache_key="c-1") as model:
        assert OpenAIResponsesModel("gpt-5.4", api_key="k", base_url=endpoint.url).prompt_cache_key is None
        reply = await Conversation(registry(), instructions=LONG_INSTRUCTIONS).send("How was Q3?", model)
    assert reply.text == "Q3 was good." and reply.rounds == 1
    # The alias the model called ran the tool it stands for.
    assert reply.tool_calls[0].result.text_content() == "revenue of Q3"
    first, second = (request.body for request in endpoint.requests)
    assert [request.api for request in endpoint.requests] == ["responses", "responses"]
    for request in (first, second):
        check_request(request)
        assert request["store"] is False and request["prompt_cache_key"] == "c-1"
        assert request["include"] == ["reasoning.encrypted_content"] and "previous_response_id" not in request
    assert first["instructions"] == LONG_INSTRUCTIONS
    assert {t["name"] for t in first["tools"]} == {"word_count", alias}
    assert all("function" not in t and t["type"] == "function" for t in first["tools"])
    assert first["input"] == [{"type": "message", "role": "user", "content": "How was Q3?"}]
    # The next request repeats the first one's bytes, then the model's own items verbatim, then the result.
    assert json.dumps(second["tools"]) == json.dumps(first["tools"])
    assert second["instructions"] == first["instructions"] and second["input"][:1] == first["input"]
    reasoning, call, result = second["input"][1:]
    assert reasoning == REASONING and call["name"] == alias and json.loads(call["arguments"]) == {"quarter": "Q3"}
    assert result == {"type": "function_call_output", "call_id": call["call_id"], "output": "revenue of Q3"}
    # So OpenAI's cache serves the second request's whole first part, and the reply says so.
    usage = endpoint.requests[1].usage
    assert usage.cache_read / usage.input_tokens > 0.9
    assert reply.usage.cache_read_tokens == usage.cache_read and reply.usage.input_tokens == sum(
        r.usage.input_tokens for r in endpoint.requests
    )


async def test_responses_model_reads_cache_figures_into_usage() -> None:
    with llm_stub((200, response(text("hi"), cached=1536))) as stub:
        async with responses_model(stub.url) as model:
            answer = await model.complete("", [UserMessage("hi")], [])
    assert answer.text == "hi" and answer.tool_calls == ()
    gpt_5_4 = pytest.approx((464 * 2.5 + 1536 * 0.25 + 20 * 15) / 1e6)  # the shipped prices of gpt-5.4
    assert answer.usage == Usage(2000, 1536, 0, 20, cost=gpt_5_4)
    assert answer.provider_blocks == (text("hi"),)


def test_history_of_every_kind_converts_to_valid_input_items() -> None:
    image = ToolResult(
        content=[mcp_types.TextContent(text="a chart"), mcp_types.ImageContent(data="aGk=", mime_type="image/png")]
    )
    call = ToolCall("c1", "general__chart", {"q": 1})
    raw = ToolCall("c2", "general__echo", "{not json")
    history = [
        UserMessage("draw"),
        ContextMessage("# Skill: pdf\n\nUse the pdf tools.", source="skill:pdf"),
        # Another provider's answer, its own blocks included: rebuilt, not echoed.
        AssistantMessage("Drawing.", (call, raw), provider_blocks=({"type": "server_tool_use", "id": "srvtoolu_1"},)),
        ToolMessage(call, image),
        ToolMessage(raw, ToolResult.error("bad arguments")),
    ]
    items = to_responses_input(history)
    assert problems(items, list[ResponseInputItemParam]) == []
    assert items[1] == {
        "type": "message",
        "role": "developer",
        "content": "[Context (skill:pdf)]\n# Skill: pdf\n\nUse the pdf tools.",
    }
    assert items[2] == {"type": "message", "role": "assistant", "content": "Drawing."}
    assert items[3]["arguments"] == '{"q": 1}' and items[4]["arguments"] == "{not json"
    assert items[5]["output"] == [
        {"type": "input_text", "text": "a chart"},
        {"type": "input_image", "image_url": "data:image/png;base64,aGk="},
    ]
    assert items[6]["output"] == "[tool error] bad arguments"


def deferred_schemas() -> list[dict[str, Any]]:
    def schema(name: str) -> dict[str, Any]:
        return {
            "type": "function",
            "name": name,
            "description": f"does {name}",
            "parameters": {"type": "object", "properties": {}},
            "strict": False,
        }

    return [schema(n) for n in ("github__list_issues", "claude-flow__memory_get", "read_file", "github__create_issue")]


def test_deferred_tools_go_in_one_namespace_per_server_beside_hosted_tool_search() -> None:
    model = OpenAIResponsesModel("gpt-5.4", api_key="k")
    visible = [{"type": "function", "function": {"name": "general__echo", "parameters": {"type": "object"}}}]
    request = model.request("Be brief.", [UserMessage("hi")], visible, deferred_schemas())
    check_request(request)
    tools = request["tools"]
    # Chat Completions nesting is flattened; deferred bare names stay top-level, servers sorted.
    assert tools[0]["name"] == "general__echo" and "function" not in tools[0]
    assert [t.get("name") for t in tools[1:]] == ["read_file", "claude-flow", "github", None]
    github = tools[3]
    assert github["type"] == "namespace" and "list_issues" in github["description"]
    assert [f["name"] for f in github["tools"]] == ["github__create_issue", "github__list_issues"]
    assert all(f["defer_loading"] is True for f in github["tools"]) and tools[1]["defer_loading"] is True
    assert tools[-1] == {"type": "tool_search", "execution": "server"}
    # Client search needs toolsift's search_tools in the turn; without it OpenAI searches.
    assert to_responses_tools(visible, deferred_schemas(), tool_search="client")[-1] == tools[-1]
    # The same turn gives the same bytes, whatever order the deferred tools came in.
    again = model.request("Be brief.", [UserMessage("hi")], visible, list(reversed(deferred_schemas())))
    assert json.dumps(again) == json.dumps(request)


def test_a_client_tool_search_stays_declared_when_the_scope_stops_offering_search_tools() -> None:
    model = OpenAIResponsesModel("gpt-5.4", api_key="k", tool_search="client")
    search = {
        "type": "function",
        "name": "search_tools",
        "description": "Find tools by what they do.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    }
    call = ToolCall("toolsift_load_1", "search_tools", {"query": "tools of skill mem"})
    loading = ToolMessage(call, ToolResult.text("Loaded 1 tool."), references=("claude-flow__memory_get",))
    history = [UserMessage("hi"), AssistantMessage(tool_calls=(call,)), loading, UserMessage("remember k")]
    offered = model.request("Be brief.", history, [search], deferred_schemas())
    # The skill that is active now does not allow search_tools: the turn's tools no longer hold it.
    hidden = model.request("Be brief.", history, [], deferred_schemas())
    check_request(hidden)
    assert offered["tools"][-1]["execution"] == "client" and hidden["tools"] == offered["tools"]
    # So the loading exchange stays a client search whose output carries the definition, byte for byte.
    assert hidden["input"] == offered["input"]
    assert [item["type"] for item in hidden["input"][1:3]] == ["tool_search_call", "tool_search_output"]
    assert hidden["input"][2]["tools"][0]["tools"][0]["name"] == "claude-flow__memory_get"
    # Without such an exchange to keep, or before a client search was ever declared, OpenAI searches.
    hosted = {"type": "tool_search", "execution": "server"}
    assert model.request("Be brief.", history[-1:], [], deferred_schemas())["tools"][-1] == hosted
    fresh = OpenAIResponsesModel("gpt-5.4", api_key="k", tool_search="client")
    assert fresh.request("Be brief.", history, [], deferred_schemas())["tools"][-1] == hosted


async def test_the_endpoint_runs_the_hosted_search_for_a_deferred_function_the_model_calls() -> None:
    """The loopback provider does what OpenAI's hosted tool_search does: a deferred function the model calls
    is loaded first, within the same answer, and its definition is in every later request."""
    calls = (Call("github__list_issues"), Call("general__echo"))
    script = [Reply(calls=calls), Reply(calls=(Call("github__list_issues"),))]
    visible = [{"type": "function", "name": "general__echo", "parameters": {"type": "object"}, "strict": False}]
    async with ProviderEndpoint(script) as endpoint, responses_model(endpoint.url) as model:
        history: list[Any] = [UserMessage("issues?")]
        first = await model.complete("sys", history, visible, deferred_schemas())
        history += [first, *(ToolMessage(call, ToolResult.text("none")) for call in first.tool_calls)]
        second = await model.complete("sys", history, visible, deferred_schemas())
    search, output, *functions = first.provider_blocks
    assert (search["type"], search["execution"], search["arguments"]) == (
        "tool_search_call",
        "server",
        {"paths": ["github"]},
    )
    assert (output["type"], output["execution"]) == ("tool_search_output", "server")
    assert output["tools"] == [{**deferred_schemas()[0], "defer_loading": True}]  # as declared in its namespace
    assert [f["name"] for f in functions] == ["github__list_issues", "general__echo"]  # the visible one needs none
    # Loaded once: the next call needs no search, and the next request carries the definition in its input.
    assert [block["type"] for block in second.provider_blocks] == ["function_call"]
    assert endpoint.requests[0].usage.loaded_tokens == 0 < endpoint.requests[1].usage.loaded_tokens
    check_request(model.request("sys", history, visible, deferred_schemas()))


def test_model_without_tool_search_defers_nothing() -> None:
    model = OpenAIResponsesModel("gpt-4.1", api_key="k", tool_search=None)
    assert model.defers_tools is False
    request = model.request("", [UserMessage("hi")], [], deferred_schemas())
    assert "tools" not in request
    assert to_responses_tools([], []) == []
    with pytest.raises(AgentError, match="tool_search must be 'server', 'client' or None, not 'local'"):
        OpenAIResponsesModel("gpt-5.4", api_key="k", tool_search="local")  # type: ignore[arg-type]


async def test_client_tool_search_is_answered_by_search_tools_with_the_tools_it_found() -> None:
    search_tools = {
        "type": "function",
        "name": "search_tools",
        "description": "Find tools.",
        "parameters": {"type": "object", "properties": {"queries": {"type": "array", "items": {"type": "string"}}}},
        "strict": False,
    }
    search_call = {
        "type": "tool_search_call",
        "id": "ts_1",
        "call_id": "call_s",
        "execution": "client",
        "status": "completed",
        "arguments": {"queries": ["open an issue"]},
        "created_by": "model",  # output-only: dropped when the item goes back as input
    }
    replies = [(200, response(search_call)), (200, response(text("done")))]
    with llm_stub(*replies) as stub:
        async with responses_model(stub.url, tool_search="client") as model:
            history: list[Any] = [UserMessage("open an issue")]
            answer = await model.complete("", history, [search_tools], deferred_schemas())
            (call,) = answer.tool_calls
            assert call == ToolCall("call_s", "search_tools", {"queries": ["open an issue"]})
            found = ToolMessage(call, ToolResult.text("github__create_issue"), references=("github__create_issue",))
            history += [answer, found]
            await model.complete("", history, [search_tools], deferred_schemas())
            # A later request repeats the same output even after the tool left the deferred set.
            later = model.request("", history, [search_tools], [])
    first, second = stub.requests
    check_request(first)
    check_request(second)
    assert first["tools"][-1] == {
        "type": "tool_search",
        "execution": "client",
        "description": "Find tools.",
        "parameters": search_tools["parameters"],
    }
    assert not any(t.get("name") == "search_tools" for t in first["tools"])
    echoed, output = second["input"][1:]
    assert echoed == {k: v for k, v in search_call.items() if k != "created_by"}
    assert output["type"] == "tool_search_output" and output["call_id"] == "call_s"
    (namespace,) = output["tools"]
    assert namespace["name"] == "github" and [f["name"] for f in namespace["tools"]] == ["github__create_issue"]
    assert "defer_loading" not in namespace["tools"][0]
    assert later["input"][2] == output


async def test_responses_errors_name_the_model() -> None:
    error = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
    with llm_stub((401, error)) as stub:
        async with responses_model(stub.url) as model:
            with pytest.raises(AgentError, match="OpenAI Responses request to model 'gpt-5.4' failed"):
                await Conversation(registry()).send("hi", model)
    failed = {**response(), "error": {"code": "server_error", "message": "the model broke"}}
    with llm_stub((200, {**failed, "status": "failed"})) as stub:
        async with responses_model(stub.url) as model:
            with pytest.raises(AgentError, match="model 'gpt-5.4' failed the response: the model broke"):
                await model.complete("", [UserMessage("hi")], [])


def test_load_model_builds_the_responses_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(AgentError, match="No API key for openai-responses: set OPENAI_API_KEY"):
        load_model("openai-responses:gpt-5.4")
    model = load_model("openai-responses:gpt-5.4", base_url="http://127.0.0.1:1/v1", prompt_cache_key="u-1")
    assert isinstance(model, OpenAIResponsesModel) and model.format == "openai-responses"
    assert model.prompt_cache_key == "u-1" and model.defers_tools
    # OpenAI itself gets a key drawn once per model; a string is shared as given; False sends none.
    drawn = OpenAIResponsesModel("gpt-5.4", api_key="k").prompt_cache_key
    assert drawn is not None and drawn.startswith("toolsift-")
    assert OpenAIResponsesModel("gpt-5.4", api_key="k", prompt_cache_key=False).prompt_cache_key is None


def test_echoed_items_keep_exactly_the_fields_the_sdk_input_types_declare() -> None:
    from openai.types.responses.response_function_tool_call_param import ResponseFunctionToolCallParam
    from openai.types.responses.response_input_item_param import ToolSearchCall
    from openai.types.responses.response_output_message_param import ResponseOutputMessageParam
    from openai.types.responses.response_reasoning_item_param import ResponseReasoningItemParam
    from openai.types.responses.response_tool_search_output_item_param_param import (
        ResponseToolSearchOutputItemParamParam,
    )

    declared = {
        "message": ResponseOutputMessageParam,
        "function_call": ResponseFunctionToolCallParam,
        "reasoning": ResponseReasoningItemParam,
        "tool_search_call": ToolSearchCall,
        "tool_search_output": ResponseToolSearchOutputItemParamParam,
    }
    assert {kind: param.__required_keys__ | param.__optional_keys__ for kind, param in declared.items()} == INPUT_FIELDS


@pytest.fixture
async def box(tmp_path: Path, examples_in_process: None) -> AsyncIterator[Toolbox]:
    """claude-flow's 214 tools, internal (searchable, not shown), beside a global server; both in this process."""
    config = tmp_path / "toolsift.json"
    servers = {
        "claude-flow": {"command": sys.executable, "args": [str(SERVERS / "flow.py")]},
        "general": {"command": sys.executable, "args": [str(SERVERS / "general.py")], "internalOnly": False},
    }
    config.write_text(json.dumps({"tools": {"mcpServers": servers}, "skills": {"userSkills": False}}))
    async with Toolbox.from_config(config) as started:
        yield started


async def test_on_demand_defers_the_global_tools_and_the_hosted_search_loads_what_is_called(box: Toolbox) -> None:
    """With ``on_demand``, a global tool is deferred like the rest: the provider's search loads it when the
    model calls it, within the answer, and toolsift runs the call under the turn's scope."""
    script = [Reply(calls=(Call("general__echo", {"text": "hi"}),)), Reply(text="Echoed.")]
    async with ProviderEndpoint(script) as endpoint, responses_model(endpoint.url, on_demand=True) as model:
        reply = await box.conversation(instructions="Be brief.").send("Echo hi", model)
    assert reply.text == "Echoed." and not reply.tool_calls[0].result.is_error
    first, second = (request.body for request in endpoint.requests)
    for request in (first, second):
        check_request(request)
    # No function is loaded up front (search_tools is not declared beside the hosted search); general is a
    # namespace the model sees by name and description, and the builtins are deferred functions of their own.
    functions = [t for t in first["tools"] if t["type"] == "function"]
    assert [t["name"] for t in functions if not t.get("defer_loading")] == []
    assert {"read_skill_file", "ListMcpResources"} <= {t["name"] for t in functions if t.get("defer_loading")}
    (general,) = [t for t in first["tools"] if t.get("name") == "general"]
    assert general["type"] == "namespace" and all(f["defer_loading"] for f in general["tools"])
    assert json.dumps(second["tools"]) == json.dumps(first["tools"])
    loaded = [item for item in second["input"] if item["type"] == "tool_search_output"]
    assert [[t["name"] for t in item["tools"]] for item in loaded] == [["general__echo"]]
    assert endpoint.requests[1].usage.loaded_tokens > 0


async def test_hosted_tool_search_loads_a_deferred_tool_that_runs_through_toolsift(box: Toolbox) -> None:
    """The model searches on OpenAI's side, calls what it loaded; toolsift runs it under the turn's scope."""
    search_call = {
        "type": "tool_search_call",
        "id": "ts_1",
        "execution": "server",
        "status": "completed",
        "arguments": {"query": "remember a value"},
    }
    loaded = {
        "type": "tool_search_output",
        "id": "tso_1",
        "execution": "server",
        "status": "completed",
        "tools": [
            {
                "type": "namespace",
                "name": "claude-flow",
                "description": "memory",
                "tools": [{"type": "function", "name": "claude-flow__memory_store", "defer_loading": True}],
            }
        ],
    }
    store = function_call("claude-flow__memory_store", {"key": "release", "value": "May 4"}, namespace="claude-flow")
    events: list[AuditEvent] = []
    box.registry.audit.subscribe(events.append)
    replies = [(200, response(search_call, loaded, store)), (200, response(text("Stored.")))]
    with llm_stub(*replies) as stub:
        async with responses_model(stub.url, on_demand=False) as model:
            reply = await box.conversation(instructions="Be brief.").send("Remember the release is May 4", model)
    assert reply.text == "Stored." and not reply.tool_calls[0].result.is_error
    calls = [(e.kind, e.tool) for e in events if e.kind.startswith("tool.")]
    assert calls == [("tool.executed", "claude-flow__memory_store")]
    first, second = stub.requests
    for request in (first, second):
        check_request(request)
    (namespace,) = [t for t in first["tools"] if t["type"] == "namespace"]
    assert namespace["name"] == "claude-flow" and len(namespace["tools"]) == 214
    assert all(f["defer_loading"] for f in namespace["tools"]) and first["tools"][-1]["type"] == "tool_search"
    assert not any(t["type"] == "function" and t["name"].startswith("claude-flow__") for t in first["tools"])
    # Same tools, same start; then what the model produced, verbatim, and the call's result.
    assert json.dumps(second["tools"]) == json.dumps(first["tools"])
    assert second["input"][: len(first["input"])] == first["input"]
    assert second["input"][len(first["input"]) :][:3] == [search_call, loaded, store]
    result = second["input"][-1]
    assert result["type"] == "function_call_output" and result["call_id"] == "call_1"
    assert result["output"] and not result["output"].startswith("[tool error]")


async def test_client_tool_search_runs_search_tools_and_loads_what_it_found(box: Toolbox) -> None:
    """toolsift's own search answers the model's tool search; the tools it found arrive as a search output."""
    search_call = {
        "type": "tool_search_call",
        "id": "ts_1",
        "call_id": "call_s",
        "execution": "client",
        "status": "completed",
        "arguments": {"queries": ["store a value in persistent memory"]},
    }
    store = function_call("claude-flow__memory_store", {"key": "release", "value": "May 4"}, call_id="call_2")
    replies = [(200, response(search_call)), (200, response(store)), (200, response(text("Stored.")))]
    with llm_stub(*replies) as stub:
        async with responses_model(stub.url, tool_search="client") as model:
            reply = await box.conversation().send("Remember the release is May 4", model)
    assert reply.text == "Stored." and [m.call.name for m in reply.tool_calls] == ["search_tools", store["name"]]
    assert not reply.tool_calls[1].result.is_error
    first, second, third = stub.requests
    for request in stub.requests:
        check_request(request)
    search = first["tools"][-1]
    assert search["type"] == "tool_search" and search["execution"] == "client" and "queries" in str(search)
    (output,) = [item for item in second["input"] if item["type"] == "tool_search_output"]
    assert output["call_id"] == "call_s" and output["execution"] == "client"
    found = [f["name"] for namespace in output["tools"] for f in namespace["tools"]]
    assert "claude-flow__memory_store" in found
    assert third["input"][: len(second["input"])] == second["input"]
