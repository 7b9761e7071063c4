"""The example agent loops run end to end against a loopback stub of each provider's API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from llm_stub import llm_stub, recorded
from waits import CHILD_SECONDS

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


def run_example(script: str, config: Path, env: dict[str, str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), "--config", str(config)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=CHILD_SECONDS,
        check=False,
        env={**os.environ, **env},
    )


def openai_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    reply = recorded("openai_tool_call.json")
    reply["choices"][0]["message"]["tool_calls"][0]["function"] = {"name": name, "arguments": json.dumps(arguments)}
    return reply


def test_openai_example_runs_the_loop(config: Path) -> None:
    with llm_stub((200, openai_call("general__add", {"a": 2, "b": 2})), (200, recorded("openai_final.json"))) as stub:
        done = run_example(
            "agent_openai.py",
            config,
            {"OPENAI_BASE_URL": stub.url + "/v1", "OPENAI_API_KEY": "sk-test"},
            "/skills\nadd two and two\n",
        )
    assert done.returncode == 0, done.stderr
    assert "/use code-assist" in done.stdout
    assert "[tool general__add: ok]" in done.stdout and "The text has 4 words." in done.stdout
    tool_message = stub.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "4" in tool_message["content"]


def test_anthropic_example_runs_the_loop(config: Path) -> None:
    first = recorded("anthropic_tool_use.json")
    first["content"][1].update(name="general__echo", input={"text": "hello"})
    with llm_stub((200, first), (200, recorded("anthropic_final.json"))) as stub:
        done = run_example(
            "agent_anthropic.py",
            config,
            {"ANTHROPIC_BASE_URL": stub.url, "ANTHROPIC_API_KEY": "sk-ant-test"},
            "/tools\nsay hello\n",
        )
    assert done.returncode == 0, done.stderr
    assert "general__echo (global)" in done.stdout
    assert "[tool general__echo: ok]" in done.stdout and "The text has 4 words." in done.stdout
    result = stub.requests[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and "hello" in result["content"]
