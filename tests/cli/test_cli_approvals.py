"""Calls held back by ask rules are put to the person at the terminal: chat asks, `call` asks or takes --yes."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli import chat, run, write_config

from toolsift.cli._approve import TerminalApprover
from toolsift.cli._output import Output
from toolsift.registry import ApprovalRequest, ToolSpec

ASKING = {"default": {"permissions": {"ask": ["general__add"]}}}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_config(tmp_path_factory.mktemp("approvals"), agents=ASKING)


def test_chat_asks_before_a_call_and_remembers_always(config: Path) -> None:
    done = chat(config,
                'call general__add {"a": 1, "b": 2}', "n",
                'call general__add {"a": 2, "b": 2}', "a",
                'call general__add {"a": 3, "b": 2}',
                'call general__echo {"text": "not asked"}',
                "/quit")
    out = done.stdout
    assert out.count("Approve general__add") == 2
    assert "it matches ask rule 'general__add', and approval was declined" in out
    assert "\n4\n" in out and "\n5\n" in out and "not asked" in out
    assert "approved: general__add" in done.stderr  # the third call ran on the "always" answer


def test_call_without_a_terminal_refuses_and_names_yes(capsys: pytest.CaptureFixture[str], config: Path) -> None:
    code, out, err = run(capsys, "-c", str(config), "call", "general__add", '{"a": 1, "b": 2}')
    assert code == 3
    assert "there is no terminal to ask; pass --yes to approve such calls" in out + err
    code, out, err = run(capsys, "-c", str(config), "call", "general__add", '{"a": 1, "b": 2}', "--yes")
    assert code == 0 and "\n3\n" in out
    assert 'approved: general__add {"a": 1, "b": 2}' in err


async def test_end_of_input_is_a_no() -> None:
    approver = TerminalApprover(Output(), interactive=True, read=lambda prompt: None)
    request = ApprovalRequest(ToolSpec("general__add"), {"a": 1}, "it matches ask rule 'general__add'", "c1")
    assert await approver(request) is False
