"""Approvals of served calls, driven by hand as a 2026-07-28 client drives them, and what the audit log says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp.types as types
from mcp import Client

ASKING = {"default": {"permissions": {"level": "execute", "ask": ["write_file"]}}}


def audit(project: Path) -> list[dict[str, Any]]:
    """The records of the project's audit log (``audit.jsonl``)."""
    return [json.loads(line) for line in (project / "audit.jsonl").read_text().splitlines()]


YES = types.ElicitResult(action="accept", content={"approve": True})
WRITE = {"path": "out.txt", "content": "hi"}


async def retry(
    client: Client, arguments: dict[str, Any], answer: types.InputResponse | None = None, state: str | None = None
) -> types.CallToolResult | types.InputRequiredResult:
    """One round of a 2026-07-28 call of write_file, driven by hand: the answer and state are the test's."""
    return await client.session.call_tool(
        "builtin__write_file",
        arguments,
        input_responses={"toolsift.approval": answer} if answer else None,
        request_state=state,
        allow_input_required=True,
    )


def executed(project: Path) -> int:
    """How many calls of write_file ran, by the audit log (every process serving the project writes there)."""
    return sum(record["kind"] == "tool.executed" and record["tool"] == "write_file" for record in audit(project))
