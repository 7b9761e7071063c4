"""The terminal answers a server's elicitation field by field, and shows its log messages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mcp.types as types
import pytest

from toolsift.cli._elicit import TerminalElicitor, log_printer
from toolsift.cli._output import Output

SCHEMA: Any = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "description": "Years"},
        "score": {"type": "number"},
        "verified": {"type": "boolean", "default": True},
        "status": {"type": "string", "enum": ["active", "inactive"]},
        "titled": {"type": "string", "oneOf": [{"const": "v1", "title": "One"}, {"const": "v2", "title": "Two"}]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
        "note": {"type": "string"},
    },
    "required": ["age", "status"],
}


def reader(*answers: str | None) -> tuple[list[str], Any]:
    prompts: list[str] = []
    queue: Iterator[str | None] = iter(answers)

    def read(prompt: str) -> str | None:
        prompts.append(prompt)
        return next(queue)

    return prompts, read


def form(message: str = "Who are you?") -> types.ElicitRequestFormParams:
    return types.ElicitRequestFormParams(message=message, requested_schema=SCHEMA)


async def test_a_form_is_asked_field_by_field_with_types_defaults_and_choices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # answer; name: default; age: "x" then "", then 30; score; verified: default; status: wrong, then right;
    # titled; tags: a wrong one, then two; note: left out.
    prompts, read = reader("a", "", "x", "", "30", "9.5", "", "paused", "inactive", "v2", "a,z", "a, c", "")
    result = await TerminalElicitor(Output(), interactive=True, read=read)("srv", form())
    assert result == types.ElicitResult(
        action="accept",
        content={
            "name": "John Doe",
            "age": 30,
            "score": 9.5,
            "verified": True,
            "status": "inactive",
            "titled": "v2",
            "tags": ["a", "c"],
        },
    )
    assert "age (Years): " in prompts and "status (active, inactive): " in prompts
    shown = capsys.readouterr().out
    assert "MCP server 'srv' asks: Who are you?" in shown
    assert "age is required" in shown and "age: invalid literal for int()" in shown
    assert "status: choose one of active, inactive" in shown and "tags: choose from a, b, c" in shown


@pytest.mark.parametrize(
    ("answers", "action"), [(("d",), "decline"), (("c",), "cancel"), ((None,), "cancel"), (("a", None), "cancel")]
)
async def test_the_person_may_decline_or_cancel(answers: tuple[str | None, ...], action: str) -> None:
    _, read = reader(*answers)
    result = await TerminalElicitor(Output(), interactive=True, read=read)("srv", form())
    assert isinstance(result, types.ElicitResult) and result.action == action


async def test_a_url_is_shown_to_open(capsys: pytest.CaptureFixture[str]) -> None:
    _, read = reader("a")
    params = types.ElicitRequestURLParams(message="Sign in", url="https://example.com/login", elicitation_id="e1")
    result = await TerminalElicitor(Output(), interactive=True, read=read)("srv", params)
    assert result == types.ElicitResult(action="accept")
    assert "Open https://example.com/login" in capsys.readouterr().out


async def test_without_a_terminal_nobody_is_asked() -> None:
    result = await TerminalElicitor(Output(), interactive=False)("srv", form())
    assert isinstance(result, types.ErrorData) and "no terminal to ask" in result.message


async def test_server_logs_are_shown(capsys: pytest.CaptureFixture[str]) -> None:
    show = log_printer(Output())
    await show("srv", types.LoggingMessageNotificationParams(level="info", data="started", logger="db"))
    assert "[srv db] info: started" in capsys.readouterr().err
