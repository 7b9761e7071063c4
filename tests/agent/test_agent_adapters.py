"""Framework adapters end to end: each framework's own test model, a real example server, a skill switched on midway.

In every framework the model sees the global tools, then after ``/use
flow-memory`` the skill's internal claude-flow memory tools instead; a call
runs through the five layers and the audit log, and a call toolsift refuses
(``memory_delete`` needs the admin level) comes back to the model as a tool
error while the run goes on.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from toolsift.registry import AuditEvent
from toolsift.toolbox import Toolbox

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "examples" / "servers"


@pytest.fixture
async def box(tmp_path: Path) -> AsyncIterator[Toolbox]:
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
                    "permissions": [{"match": "claude-flow__*_delete", "requiredLevel": "admin"}],
                },
                "skills": {"paths": [str(ROOT / "examples" / "skills")], "userSkills": False},
            }
        )
    )
    async with Toolbox.from_config(config) as started:
        yield started


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
    plan = [("general__echo", {"text": "hi there"})]

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append({tool.name for tool in info.function_tools})
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart(*plan[0])])
        return ModelResponse(parts=[TextPart("done")])

    conversation = box.conversation()
    events = audited(box)
    agent = Agent(FunctionModel(model), toolsets=[ToolsiftToolset(conversation)])
    first = await agent.run("echo something")
    assert "general__echo" in seen[0] and not any(name.startswith("claude-flow__") for name in seen[0])
    (answer,) = [p for m in first.all_messages() for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
    assert "hi there" in str(answer.content)
    assert [(e.kind, e.tool) for e in events] == [("tool.executed", "general__echo")]

    await conversation.handle_command("/use flow-memory the release date")
    plan[0] = ("claude-flow__memory_delete", {"key": "release"})
    second = await agent.run("forget it")
    assert seen[2] and all(name.startswith("claude-flow__memory_") for name in seen[2])
    (denied,) = [p for m in second.new_messages() for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
    assert "layer 5" in str(denied.content) and "admin" in str(denied.content) and second.output == "done"
    assert (events[-1].kind, events[-1].tool, events[-1].layer) == ("tool.denied", "claude-flow__memory_delete", 5)


async def test_openai_agents_server_follows_use_and_returns_denials_as_error_results(box: Toolbox) -> None:
    from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from toolsift.agent.adapters.openai_agents import ToolsiftAgentsServer

    seen: list[set[str]] = []
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

    conversation = box.conversation()
    events = audited(box)
    agent = Agent(name="assistant", model=ScriptedModel(), mcp_servers=[ToolsiftAgentsServer(conversation)])
    config = RunConfig(tracing_disabled=True)
    first = await Runner.run(agent, "echo something", run_config=config)
    assert first.final_output == "done" and "hi there" in outputs[0]
    assert "general__echo" in seen[0] and not any(name.startswith("claude-flow__") for name in seen[0])

    await conversation.handle_command("/use flow-memory the release date")
    plan[0] = ("claude-flow__memory_delete", '{"key": "release"}')
    second = await Runner.run(
        agent, [*first.to_input_list(), {"role": "user", "content": "forget it"}], run_config=config
    )
    assert second.final_output == "done" and "layer 5" in outputs[-1]
    assert seen[-1] and all(name.startswith("claude-flow__memory_") for name in seen[-1])
    assert [(e.kind, e.layer) for e in events] == [("tool.executed", None), ("tool.denied", 5)]


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
    assert tools and all(name.startswith("claude-flow__memory_") for name in tools)
    delete = {"name": "claude-flow__memory_delete", "args": {"key": "release"}, "id": "1", "type": "tool_call"}
    refused = await tools["claude-flow__memory_delete"].ainvoke(delete)
    assert isinstance(refused, ToolMessage) and refused.status == "error" and "layer 5" in str(refused.content)
    # A tool object taken before the /use is refused now too: an error message, not an exception.
    stale = await echo.ainvoke({"name": "general__echo", "args": {"text": "x"}, "id": "2", "type": "tool_call"})
    assert isinstance(stale, ToolMessage) and stale.status == "error" and "layer 4" in str(stale.content)
    assert [(e.kind, e.layer) for e in events] == [("tool.executed", None), ("tool.denied", 5), ("tool.denied", 4)]
