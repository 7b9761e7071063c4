"""The audit log's file: there before any call, never written through a planted link, and no call lost to it."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest
from local_tools import RecordingTool

from toolsift.registry import AuditLog, ToolRegistry
from toolsift.registry._internal import AuditEvent

BASHRC = "alias ls='ls --color'\n"


def test_the_audit_log_is_created_private_when_it_is_made(tmp_path: Path) -> None:
    AuditLog(tmp_path / "audit.jsonl")
    assert (tmp_path / "audit.jsonl").read_text(encoding="utf-8") == ""
    assert stat.S_IMODE((tmp_path / "audit.jsonl").stat().st_mode) == 0o600


def test_an_existing_audit_log_is_appended_to(tmp_path: Path) -> None:
    (tmp_path / "audit.jsonl").write_text('{"kind": "earlier"}\n', encoding="utf-8")
    log = AuditLog(tmp_path / "audit.jsonl")
    log.emit(AuditEvent(kind="tool.executed", tool="t", outcome="ok", call_id="1", duration_ms=1.0))
    assert [json.loads(line)["kind"] for line in (tmp_path / "audit.jsonl").read_text().splitlines()] == [
        "earlier",
        "tool.executed",
    ]


@pytest.mark.parametrize("link", ["symbolic", "hard"])
async def test_a_link_planted_after_start_gets_no_record_and_calls_go_on(
    tmp_path: Path, link: str, caplog: pytest.LogCaptureFixture
) -> None:
    bashrc = tmp_path / "home" / ".bashrc"
    bashrc.parent.mkdir()
    bashrc.write_text(BASHRC, encoding="utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    audit = workspace / "audit.jsonl"
    registry = ToolRegistry(audit=AuditLog(audit))
    events: list[AuditEvent] = []
    registry.audit.subscribe(events.append)
    registry.register(RecordingTool("write_note"))
    audit.unlink(missing_ok=True)  # what a program in the workspace could do, then plant a link in its place
    if link == "symbolic":
        audit.symlink_to(bashrc)
    else:
        os.link(bashrc, audit)
    with caplog.at_level(logging.ERROR, logger="toolsift.audit"):
        for _ in range(3):
            result = await registry.execute("write_note", {"path": "$(touch PWNED)"})
            assert not result.is_error
    assert bashrc.read_text(encoding="utf-8") == BASHRC
    assert [event.kind for event in events] == ["tool.executed"] * 3  # subscribers still get every record
    errors = [record.getMessage() for record in caplog.records if record.levelno == logging.ERROR]
    problem = "is a symbolic link" if link == "symbolic" else "has 2 hard links (other names for the same file)"
    assert errors == [
        f"audit records are not written: audit log {audit} {problem}; toolsift does not write through links a "
        "program could have planted; remove it"
    ]  # once, naming the file


def test_a_planted_link_at_start_is_refused_and_reported(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "audit.jsonl").symlink_to(tmp_path / "autostart.desktop")
    with caplog.at_level(logging.ERROR, logger="toolsift.audit"):
        AuditLog(tmp_path / "audit.jsonl")
    assert not (tmp_path / "autostart.desktop").exists()
    assert f"audit log {tmp_path / 'audit.jsonl'} is a symbolic link" in caplog.text


def test_records_lost_are_counted_when_the_log_can_be_written_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    log = AuditLog(folder / "audit.jsonl")
    (folder / "audit.jsonl").unlink()
    folder.rmdir()
    event = AuditEvent(kind="tool.executed", tool="t", outcome="ok", call_id="1", duration_ms=1.0)
    with caplog.at_level(logging.WARNING, logger="toolsift.audit"):
        log.emit(event)
        log.emit(event)
        folder.mkdir()
        log.emit(event)
    assert [record.getMessage() for record in caplog.records] == [
        f"audit records are not written: audit log {folder / 'audit.jsonl'}: No such file or directory",
        f"the audit log {folder / 'audit.jsonl'} is written again; 2 records were lost",
    ]
    assert len((folder / "audit.jsonl").read_text().splitlines()) == 1
