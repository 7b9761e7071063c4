"""The example agent loops run end to end against a loopback stub of each provider's API."""

from __future__ import annotations

import io
import json
import runpy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llm_stub import llm_stub, recorded

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("agents") / "toolsift.json"
    path.write_text(
        json.dumps(
            {
                "tools": {
                    "mcpServers": {
                        "general": {
                            "command": sys.executable,
                            "args": [str(ROOT / "examples" / "servers" / "general.py")],
                            "internalOnly": False,
                        }
                    }
                },
                "skills": {"paths": [str(ROOT / "examples" / "skills")], "userSkills": False},
            }
        )
    )
    return path


@pytest.fixture
def run_example(
    examples_in_process: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[[str, Path, dict[str, str], str], str]:
    """Run an example script as ``python examples/<script> --config <config>`` does, in this process.

    The loop is the point, not the interpreter's start: the script runs as ``__main__`` with the given
    environment and standard input, and its MCP server runs in this process too. It returns the printed text.
    """

    def run(script: str, config: Path, env: dict[str, str], stdin: str) -> str:
        monkeypatch.setattr(sys, "argv", [str(ROOT / "examples" / script), "--config", str(config)])
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        monkeypatch.setenv("TOOLSIFT_PYTHON", sys.executable)  # the script sets it only where it is unset
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        runpy.run_path(str(ROOT / "examples" / script), run_name="__main__")
        return capsys.readouterr().out

    return run


def openai_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    reply = recorded("openai_tool_call.json")
    reply["choices"][0]["message"]["tool_calls"][0]["function"] = {"name": name, "arguments": json.dumps(arguments)}
    return reply


def test_openai_example_runs_the_loop(
    config: Path, run_example: Callable[[str, Path, dict[str, str], str], str]
) -> None:
    with llm_stub((200, openai_call("general__add", {"a": 2, "b": 2})), (200, recorded("openai_final.json"))) as stub:
        out = run_example(
            "agent_openai.py",
            config,
            {"OPENAI_BASE_URL": stub.url + "/v1", "OPENAI_API_KEY": "sk-test"},
            "/skills\nadd two and two\n",
        )
    assert "/use code-assist" in out
    assert "[tool general__add: ok]" in out and "The text has 4 words." in out
    tool_message = stub.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "4" in tool_message["content"]


def test_anthropic_example_runs_the_loop(
    config: Path, run_example: Callable[[str, Path, dict[str, str], str], str]
) -> None:
    first = recorded("anthropic_tool_use.json")
    first["content"][1].update(name="general__echo", input={"text": "hello"})
    with llm_stub((200, first), (200, recorded("anthropic_final.json"))) as stub:
        out = run_example(
            "agent_anthropic.py",
            config,
            {"ANTHROPIC_BASE_URL": stub.url, "ANTHROPIC_API_KEY": "sk-ant-test"},
            "/tools\nsay hello\n",
        )
    assert "general__echo (global)" in out
    assert "[tool general__echo: ok]" in out and "The text has 4 words." in out
    result = stub.requests[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and "hello" in result["content"]
