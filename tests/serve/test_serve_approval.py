"""Served calls held back by ask rules are put to the client by elicitation, in both MCP eras."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext
from serve_project import text, write_project

from toolsift.registry import ApprovalRequest
from toolsift.serve import build_server

ASKING = {"default": {"permissions": {"level": "execute", "ask": ["write_file"]}}}
MODES = ["legacy", "2026-07-28"]


class Person:
    """An elicitation callback that answers with ``action``/``content`` and keeps the questions."""

    def __init__(self, action: str, content: dict[str, Any] | None = None) -> None:
        self.action = action
        self.content = content
        self.questions: list[types.ElicitRequestParams] = []

    async def __call__(self, ctx: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.questions.append(params)
        return types.ElicitResult(action=self.action, content=self.content)  # type: ignore[arg-type]


def audit(project: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (project / "audit.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("mode", MODES)
async def test_an_approved_call_runs_and_the_question_names_the_call(tmp_path: Path, mode: str) -> None:
    server = build_server(write_project(tmp_path, agents=ASKING))
    person = Person("accept", {"approve": True})
    async with server, Client(server.sdk, mode=mode, elicitation_callback=person) as client:
        result = await client.call_tool("builtin__write_file", {"path": "out.txt", "content": "hi"})
        listing = await client.call_tool("builtin__list_directory", {"path": "."})
    assert not result.is_error, text(result)
    assert (tmp_path / "ws" / "out.txt").read_text() == "hi"
    [question] = person.questions
    assert isinstance(question, types.ElicitRequestFormParams)
    assert question.message.startswith("Approve write_file {\"path\": \"out.txt\"")
    assert "it matches ask rule 'write_file'" in question.message
    assert question.requested_schema["required"] == ["approve"]
    assert not listing.is_error  # a tool no rule asks for is not asked about
    assert audit(tmp_path)[-2]["flags"] == ["approved"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("answer", [Person("decline"), Person("cancel"), Person("accept", {"approve": False})])
async def test_a_call_the_person_does_not_approve_is_refused(tmp_path: Path, mode: str, answer: Person) -> None:
    server = build_server(write_project(tmp_path, agents=ASKING))
    async with server, Client(server.sdk, mode=mode, elicitation_callback=answer) as client:
        result = await client.call_tool("builtin__write_file", {"path": "out.txt", "content": "hi"})
    assert result.is_error
    assert text(result) == ("Tool 'write_file' denied at layer 5 (permission checks): it matches ask rule "
                            "'write_file', and approval was declined")
    assert not (tmp_path / "ws" / "out.txt").exists()
    assert audit(tmp_path)[-1]["outcome"] == "denied"


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_that_cannot_be_asked_gets_a_refusal_that_says_why(tmp_path: Path, mode: str) -> None:
    server = build_server(write_project(tmp_path, agents=ASKING))
    async with server, Client(server.sdk, mode=mode) as client:
        result = await client.call_tool("builtin__write_file", {"path": "out.txt", "content": "hi"})
    assert result.is_error
    assert "it declared no form elicitation capability" in text(result)
    assert not (tmp_path / "ws" / "out.txt").exists()


async def test_an_answer_of_the_wrong_kind_is_refused(tmp_path: Path) -> None:
    server = build_server(write_project(tmp_path, agents=ASKING))
    async with server, Client(server.sdk, mode="2026-07-28", elicitation_callback=Person("accept")) as client:
        result = await client.session.call_tool(
            "builtin__write_file", {"path": "out.txt", "content": "hi"},
            input_responses={"toolsift.approval": types.ListRootsResult(roots=[])}, allow_input_required=True)
    assert isinstance(result, types.CallToolResult) and result.is_error
    assert "answered 'toolsift.approval' with a ListRootsResult" in text(result)


async def test_outside_a_served_request_there_is_no_one_to_ask(tmp_path: Path) -> None:
    server = build_server(write_project(tmp_path, agents=ASKING))
    spec = server.registry.spec("write_file")
    with pytest.raises(RuntimeError, match="did not come from an MCP client"):
        await server.approver(ApprovalRequest(spec, {}, "it matches ask rule 'write_file'", "id-1"))
