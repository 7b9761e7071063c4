"""Framework adapters end to end: each framework's own test model, a real example server, a skill switched on midway.

In every framework the model sees the global tools, then after ``/use
flow-memory`` the skill's internal claude-flow memory tools instead, and the
skill's body in its instructions; a call runs through the five layers and the
audit log, and a call toolsift refuses (``memory_delete`` waits for an approval
that no one is there to give) comes back to the model as a tool error while the run goes on.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import pytest

from toolsift.registry._internal import AuditEvent
from toolsift.toolbox import Toolbox

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "examples" / "servers"


@pytest.fixture
async def box(tmp_path: Path, examples_in_process: None) -> AsyncIterator[Toolbox]:
    """The adapters are the point, not the servers' processes: both servers run in this process."""
    config = tmp_path / "toolsift.json"
    config.write_text(
        json.dumps(
            {
                "tools": {
                    "mcpServers": {
                        "claude-flow": {"command": sys.executable, "args": [str(SERVERS / "flow.py")]},
                        "general": {
                            "command": sys.executable,
                            "args": [str(SERVERS / "general.py")],
                            "internalOnly": False,
                        },
                    },
                },
                # Offered, but refused at the call: a tool its caller may never call is not offered at all.
                "agents": {"default": {"permissions": {"ask": ["claude-flow__*_delete"]}}},
                "skills": {"paths": [str(ROOT / "examples" / "skills")], "userSkills": False},
            }
        )
    )
    async with Toolbox.from_config(config) as started:
        yield started


#: A line of flow-memory's SKILL.md body: what only the skill's instructions carry.
SKILL_BODY = "careful librarian"


def skill_tools_shown(names: Iterable[str]) -> bool:
    """The skill's claude-flow memory tools are offered, and no other claude-flow tool.

    Tools the skill leaves out may stay listed (removing them would break the provider's cached
    prefix); calling one is refused at layer 4.
    """
    flow = [name for name in names if name.startswith("claude-flow__")]
    return bool(flow) and all(name.startswith("claude-flow__memory_") for name in flow)


def audited(box: Toolbox) -> list[AuditEvent]:
    events: list[AuditEvent] = []
    box.registry.audit.subscribe(events.append)
    return events


async def test_pydantic_ai_toolset_follows_use_and_returns_denials_as_tool_answers(box: Toolbox) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from toolsift.agent.adapters.pydantic_ai import ToolsiftToolset

    seen: list[set[str]] = []
    told: list[str] = []
    plan = [("general__echo", {"text": "hi there"})]

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append({tool.name for tool in info.function_tools})
        told.append(info.instructions or "")
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart(*plan[0])])
        return ModelResponse(parts=[TextPart("done")])

    conversation = box.conversation(instructions="Be brief.")
    events = audited(box)
    agent = Agent(FunctionModel(model), toolsets=[ToolsiftToolset(conversation)])
    first = await agent.run("echo something")
    assert "general__echo" in seen[0] and not any(name.startswith("claude-flow__") for name in seen[0])
    assert "Be brief." in told[0] and SKILL_BODY not in told[0] and told[1] == told[0]
    (answer,) = [p for m in first.all_messages() for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
    assert "hi there" in str(answer.content)
    assert [(e.kind, e.tool) for e in events] == [("tool.executed", "general__echo")]

    await conversation.handle_command("/use flow-memory the release date")
    plan[0] = ("claude-flow__memory_delete", {"key": "release"})
    second = await agent.run("forget it")
    assert skill_tools_shown(seen[2])
    assert SKILL_BODY in told[2] and "the release date" in told[2]
    (denied,) = [p for m in second.new_messages() for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
    assert "layer 5" in str(denied.content) and "approval" in str(denied.content) and second.output == "done"
    assert (events[-1].kind, events[-1].tool, events[-1].layer) == ("tool.denied", "claude-flow__memory_delete", 5)


async def test_pydantic_ai_toolset_appends_a_changed_skill_to_the_history_and_keeps_the_prefix(box: Toolbox) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from toolsift.agent.adapters.pydantic_ai import ToolsiftToolset

    requests: list[tuple[str, list[ModelMessage]]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        requests.append((info.instructions or "", list(messages)))
        return ModelResponse(parts=[TextPart("done")])

    conversation = box.conversation(instructions="Be brief.")
    agent = Agent(FunctionModel(model), toolsets=[ToolsiftToolset(conversation)])
    first = await agent.run("hello")
    await conversation.handle_command("/use flow-memory the release date")
    await agent.run("go on", message_history=first.all_messages())
    (before, _), (after, history) = requests
    # The instructions that opened the conversation stay its prefix; the skill arrives as a later message.
    assert after == before and SKILL_BODY not in before
    appended = [
        p.content
        for m in history[len(first.all_messages()) :]
        for p in getattr(m, "parts", [])
        if isinstance(p, UserPromptPart) and isinstance(p.content, str)
    ]
    assert any(SKILL_BODY in text for text in appended)


async def test_openai_agents_server_follows_use_and_returns_denials_as_error_results(box: Toolbox) -> None:
    from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from toolsift.agent.adapters.openai_agents import ToolsiftAgentsServer

    seen: list[set[str]] = []
    told: list[str] = []
    outputs: list[str] = []
    plan = [("general__echo", '{"text": "hi there"}')]

    class ScriptedModel(Model):
        """Calls general__echo on a run's first request, then answers; records the tools it is offered."""

        async def get_response(
            self,
            system_instructions: str | None,
            input: Any,
            model_settings: Any,
            tools: list[Any],
            output_schema: Any,
            handoffs: Any,
            tracing: Any,
            **_: Any,
        ) -> ModelResponse:
            seen.append({tool.name for tool in tools})
            told.append(system_instructions or "")
            results = [item for item in input if isinstance(item, dict) and item.get("type") == "function_call_output"]
            if len(results) < len(seen) // 2 + len(seen) % 2:
                call = ResponseFunctionToolCall(
                    id=f"c{len(seen)}",
                    call_id=f"c{len(seen)}",
                    type="function_call",
                    name=plan[0][0],
                    arguments=plan[0][1],
                )
                return ModelResponse(output=[call], usage=Usage(), response_id=None)
            outputs.append(str(results[-1]["output"]))
            text = ResponseOutputText(type="output_text", text="done", annotations=[])
            message = ResponseOutputMessage(
                id="m", type="message", role="assistant", status="completed", content=[text]
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the test runs without streaming")

    conversation = box.conversation(instructions="Be brief.")
    events = audited(box)
    server = ToolsiftAgentsServer(conversation)
    agent = Agent(name="assistant", instructions=server.instructions, model=ScriptedModel(), mcp_servers=[server])
    config = RunConfig(tracing_disabled=True)
    first = await Runner.run(agent, "echo something", run_config=config)
    assert first.final_output == "done" and "hi there" in outputs[0]
    assert "general__echo" in seen[0] and not any(name.startswith("claude-flow__") for name in seen[0])
    # The same text at every step until its meaning changes: the provider's cached prefix holds.
    assert "Be brief." in told[0] and SKILL_BODY not in told[0] and told[1] == told[0]

    await conversation.handle_command("/use flow-memory the release date")
    plan[0] = ("claude-flow__memory_delete", '{"key": "release"}')
    second = await Runner.run(
        agent, [*first.to_input_list(), {"role": "user", "content": "forget it"}], run_config=config
    )
    assert second.final_output == "done" and "layer 5" in outputs[-1]
    assert skill_tools_shown(seen[-1])
    assert SKILL_BODY in told[-1] and "the release date" in told[-1] and told[-2] == told[-1]
    assert [(e.kind, e.layer) for e in events] == [("tool.executed", None), ("tool.denied", 5)]


async def test_langchain_model_gets_the_skill_body_and_tools_after_use(box: Toolbox) -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
    from langchain_core.outputs import ChatResult

    from toolsift.agent.adapters.langchain import LangChainTools

    requests: list[tuple[list[str], list[BaseMessage]]] = []

    class RecordingModel(GenericFakeChatModel):
        """LangChain's fake chat model, recording the tools it is bound to and the messages it is sent."""

        bound: list[str] = []

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self.model_copy(update={"bound": [tool.name for tool in tools]})

        def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
            requests.append((self.bound, list(messages)))
            return super()._generate(messages, *args, **kwargs)

    conversation = box.conversation(instructions="Be brief.")
    adapter = LangChainTools(conversation)
    chat = RecordingModel(messages=iter([AIMessage("hi"), AIMessage("stored")]))

    async def step(text: str) -> None:
        model = chat.bind_tools(await adapter.current())
        await model.ainvoke([await adapter.system_message(), HumanMessage(text)])

    await step("hello")
    await conversation.handle_command("/use flow-memory the release date")
    await step("remember it")
    (tools_before, sent_before), (tools_after, sent_after) = requests
    assert "general__echo" in tools_before and not any(n.startswith("claude-flow__") for n in tools_before)
    assert skill_tools_shown(tools_after)
    assert isinstance(sent_before[0], SystemMessage) and "Be brief." in str(sent_before[0].content)
    assert SKILL_BODY not in str(sent_before[0].content) and SKILL_BODY in str(sent_after[0].content)
    # Nothing changed, nothing differs: the same system message twice.
    assert (await adapter.system_message()).content == sent_after[0].content


async def test_langchain_tools_follow_use_and_return_denials_as_error_messages(box: Toolbox) -> None:
    from langchain_core.messages import ToolMessage

    from toolsift.agent.adapters.langchain import LangChainTools

    conversation = box.conversation()
    events = audited(box)
    adapter = LangChainTools(conversation)
    tools = {tool.name: tool for tool in await adapter.current()}
    assert "general__echo" in tools and not any(name.startswith("claude-flow__") for name in tools)
    echo = tools["general__echo"]
    assert "hi there" in await echo.ainvoke({"text": "hi there"})

    await conversation.handle_command("/use flow-memory the release date")
    tools = {tool.name: tool for tool in await adapter.current()}
    assert skill_tools_shown(tools)
    delete = {"name": "claude-flow__memory_delete", "args": {"key": "release"}, "id": "1", "type": "tool_call"}
    refused = await tools["claude-flow__memory_delete"].ainvoke(delete)
    assert isinstance(refused, ToolMessage) and refused.status == "error" and "layer 5" in str(refused.content)
    # A tool object taken before the /use is refused now too: an error message, not an exception.
    stale = await echo.ainvoke({"name": "general__echo", "args": {"text": "x"}, "id": "2", "type": "tool_call"})
    assert isinstance(stale, ToolMessage) and stale.status == "error" and "layer 4" in str(stale.content)
    assert [(e.kind, e.layer) for e in events] == [("tool.executed", None), ("tool.denied", 5), ("tool.denied", 4)]


async def test_langchain_mcp_example_agent_reaches_toolsift_serve_and_reads_the_skill_body(tmp_path: Path) -> None:
    """LangChain's own MCP adapter, its agent and its fake model, against ``toolsift serve`` over stdio,
    as ``examples/agent_langchain_mcp.py`` wires them."""
    try:
        import fastmcp  # noqa: F401
        import langchain.agents  # noqa: F401  (langchain's own warning filters first; see the example)
    except ImportError:
        pytest.skip("needs langchain[mcp]")
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.outputs import ChatResult

    spec = importlib.util.spec_from_file_location("agent_langchain_mcp", ROOT / "examples" / "agent_langchain_mcp.py")
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)

    requests: list[tuple[list[str], list[BaseMessage]]] = []

    class RecordingModel(GenericFakeChatModel):
        bound: list[str] = []

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self.model_copy(update={"bound": [tool.name for tool in tools]})

        def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
            requests.append((self.bound, list(messages)))
            return super()._generate(messages, *args, **kwargs)

    config = tmp_path / "toolsift.json"
    general = {"command": sys.executable, "args": [str(SERVERS / "general.py")], "internalOnly": False}
    skills = {"paths": [str(ROOT / "examples" / "skills")], "userSkills": False}
    config.write_text(json.dumps({"tools": {"mcpServers": {"general": general}}, "skills": skills}))
    use_skill = {"name": "skill__flow-memory", "args": {"arguments": "the release date"}, "id": "c1"}
    echo = {"name": "general__echo", "args": {"text": "hi there"}, "id": "c2"}
    script = iter([AIMessage("", tool_calls=[use_skill]), AIMessage("", tool_calls=[echo]), AIMessage("done")])
    async with example.MCPAdapter(example.toolsift_server(config)) as adapter:
        chat = await example.Chat.start(adapter, RecordingModel(messages=script))
        assert await chat.ask("what did we decide?") == "done"
    offered = requests[0][0]
    assert {"general__echo", "skill__flow-memory", "builtin__read_file"} <= set(offered)
    # The skill's body reached the model's next request, as the skill tool's answer.
    skill_answer, echo_answer = [m for m in requests[-1][1] if isinstance(m, ToolMessage)]
    assert SKILL_BODY in str(skill_answer.content) and "claude-flow__memory_*" in str(skill_answer.content)
    assert "hi there" in str(echo_answer.content) and echo_answer.status != "error"
