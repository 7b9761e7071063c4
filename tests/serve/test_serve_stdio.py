"""``toolsift serve`` over stdio, driven by the SDK's own client in both protocol eras.

The refusals and the routing of names are the server's, not the transport's: their
tests reach the server in this process; the others run ``toolsift serve`` as a child.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp.types as types
import pytest
from mcp import Client
from serve_project import stdio_params, text, write_project
from waits import CHILD_SECONDS

from toolsift.serve import build_server


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_project(tmp_path, serve={"maxResultBytes": 2000, "maxArgumentBytes": 5000})


@asynccontextmanager
async def in_process(config: Path, mode: Literal["auto", "legacy"] = "auto") -> AsyncIterator[Client]:
    """A client of ``config``'s server in this process, over memory streams."""
    server = build_server(config)
    async with server, Client(server.sdk, mode=mode) as client:
        yield client


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_serve_stdio_lists_and_calls_every_builtin_and_skill(config: Path, mode: str) -> None:
    async with Client(stdio_params(config), mode=mode) as client:
        assert client.server_capabilities.tools is not None
        assert client.server_capabilities.tools.list_changed is True
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names == [
            "builtin__read_file",
            "builtin__write_file",
            "builtin__list_directory",
            "builtin__exec_shell",
            "skill__review",
        ]

        written = await client.call_tool("builtin__write_file", {"path": "out/new.txt", "content": "fresh"})
        assert text(written) == "Wrote 5 bytes to 'out/new.txt'"
        read = await client.call_tool("builtin__read_file", {"path": "out/new.txt"})
        assert not read.is_error
        # File content is untrusted data: fenced before a model reads it.
        assert "<<<UNTRUSTED TOOL RESULT" in text(read)
        assert "\nfresh\n" in text(read)
        listed = await client.call_tool("builtin__list_directory", {"path": "."})
        assert text(listed) == "notes.txt\nout/"
        ran = await client.call_tool("builtin__exec_shell", {"command": "echo served over stdio"})
        assert "$ echo served over stdio\nexit code 0\nserved over stdio" in text(ran)

        skill = await client.call_tool("skill__review", {"file": "notes.txt"})
        assert text(skill) == (
            "Review notes.txt and list three problems.\n\n---\n"
            "Tools for this skill: builtin__read_file, builtin__list_directory"
        )
        assert skill.structured_content == {
            "skill": "review",
            "instructions": "Review notes.txt and list three problems.",
            "allowed_tools": ["read_file", "list_directory", "general__echo"],
            "tools": ["builtin__read_file", "builtin__list_directory"],
        }


async def test_serve_refusals_are_tool_errors_and_serving_goes_on(config: Path) -> None:
    (config.parent / "ws" / "big.txt").write_text("y" * 3000, encoding="utf-8")
    cases = {
        ("builtin__read_file", "../toolsift.json"): "outside the workspace",
        ("builtin__exec_shell", "rm -rf /"): "'rm' is not on the allowlist (echo, ls)",
        ("builtin__exec_shell", "echo a; cat /etc/passwd"): "only a shell understands",
        ("builtin__exec_shell", "echo $(id)"): "only a shell understands",
        ("builtin__write_file", "x" * 6000): "over the limit of 5,000 bytes",
    }
    async with in_process(config) as client:
        for (name, value), message in cases.items():
            key = "command" if name.endswith("exec_shell") else "path"
            arguments = {key: value} if name != "builtin__write_file" else {"path": "a", "content": value}
            result = await client.call_tool(name, arguments)
            assert result.is_error, name
            assert message in text(result), (name, text(result))
        wrong_type = await client.call_tool("builtin__read_file", {"path": 42})
        assert text(wrong_type) == "Invalid arguments for tool 'read_file': path: 42 is not of type 'string'"
        missing = await client.call_tool("skill__review", {})
        assert "'file' is a required property" in text(missing)
        assert not (await client.call_tool("builtin__read_file", {"path": "notes.txt"})).is_error
        # A result over serve.maxResultBytes is cut as the agent loop cuts it: fenced first, then cut with a note.
        big = await client.call_tool("builtin__read_file", {"path": "big.txt"})
        assert not big.is_error
        kept, note = [block.text for block in big.content if isinstance(block, types.TextContent)]
        assert kept.startswith("<<<UNTRUSTED TOOL RESULT") and kept.endswith(">>>") and "yyy" in kept
        assert len(kept.encode()) == 2000
        assert note.startswith("[toolsift: this result was cut to fit the limit of 2,000 bytes")
    # One JSON line per call: the registry's own, or the guard's for what never reached it.
    events = [json.loads(line) for line in (config.parent / "audit.jsonl").read_text().splitlines()]
    summary = [(e["kind"], e["tool"], tuple(e["flags"])) for e in events]
    assert ("tool.denied", "exec_shell", ("SecurityGuard",)) in summary
    assert not any("ResultGuard" in flags for _, _, flags in summary)  # a cut is no refusal
    assert ("tool.failed", "read_file", ()) in summary  # the workspace escape, raised inside the tool
    assert summary[-1] == ("tool.executed", "read_file", ())
    assert all(e["agent"] == "default" for e in events)


UNSERVED = [
    "read_file",
    "builtin__nope",
    "builtin__general__echo",
    "skill__internal-notes",
    "skill__missing",
    "general__echo",
    "builtin__",
    "nope",
]


async def test_serve_routes_only_served_names(config: Path) -> None:
    async with in_process(config, mode="legacy") as client:
        for name in UNSERVED:
            result = await client.call_tool(name, {})
            assert result.is_error
            assert text(result) == (
                f"Unknown tool {name!r}: this server serves builtin__*, skill__*; list the tools to see their names"
            )


async def test_serve_stdio_answers_malformed_json_rpc_and_keeps_serving(config: Path) -> None:
    lines = [
        "{not json",
        "[1, 2]",
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        ),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "nope"}}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"}),
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
    ]
    params = stdio_params(config)
    process = await anyio.open_process([params.command, *params.args], cwd=params.cwd, stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    answers: list[dict[str, Any]] = []
    buffer = b""
    try:
        await process.stdin.send("\n".join(lines).encode() + b"\n")
        # Seven lines in, six answers out (the notification gets none).
        while len(answers) < 6:
            buffer += await process.stdout.receive()
            *complete, buffer = buffer.split(b"\n")
            answers += [json.loads(line) for line in complete if line.strip()]
    finally:
        await process.stdin.aclose()
        await process.wait()
    assert [answer["error"]["code"] for answer in answers[:2]] == [-32700, -32600]
    assert answers[0]["id"] is None
    assert answers[2]["result"]["serverInfo"]["name"] == "toolsift"
    by_id = {answer["id"]: answer for answer in answers[3:]}
    assert by_id[2]["result"]["isError"] is True
    assert by_id[3]["error"]["code"] == -32601
    assert len(by_id[4]["result"]["tools"]) == 5


def test_serve_module_reports_config_errors(tmp_path: Path) -> None:
    config = write_project(tmp_path, serve={"profile": "nobody"})
    completed = subprocess.run(
        [sys.executable, "-m", "toolsift.serve", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=CHILD_SECONDS,
        check=False,
    )
    assert completed.returncode == 4
    assert completed.stderr.startswith("error: ") and completed.stderr.count("\n") == 1
    assert "no agent named 'nobody'; configured agents: default" in completed.stderr
