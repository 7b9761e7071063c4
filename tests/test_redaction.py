"""The two secret markers: ``***`` in settings shown to a person, ``[redacted]`` in text and data handed on."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from toolsift._redaction import MASK, REDACTED, Redactor, redact
from toolsift._secrets._display import mask_settings, mask_url
from toolsift.config import StdioServer
from toolsift.config._internal import resolve_server
from toolsift.registry import AuditLog, ToolRegistry, tool
from toolsift.registry._internal import AuditEvent


def test_text_and_data_handed_on_carry_the_redaction_marker() -> None:
    assert Redactor(["tok-123456"])("sent tok-123456") == f"sent {REDACTED}"
    assert redact({"api_key": "x", "note": "sk-" + "a" * 20}) == {"api_key": REDACTED, "note": REDACTED}


async def test_an_audit_record_carries_the_redaction_marker() -> None:
    audit = AuditLog()
    events: list[AuditEvent] = []
    audit.subscribe(events.append)
    registry = ToolRegistry(audit=audit)

    @tool
    def login(password: str) -> str:
        """Log in."""
        return "ok"

    registry.register(login)
    await registry.execute("login", {"password": "hunter22"})
    assert events[-1].arguments == {"password": REDACTED}


def test_settings_shown_to_a_person_carry_the_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    assert mask_settings({"env": {"TOKEN": "abc"}}) == {"env": {"TOKEN": MASK}}
    monkeypatch.setenv("TOOLSIFT_TEST_TOKEN", "hunter22")
    resolved = resolve_server(StdioServer(command="srv", env={"TOKEN": "${TOOLSIFT_TEST_TOKEN}"}).with_name("s"))
    assert f"env={{'TOKEN': '{MASK}'}}" in repr(resolved) and "hunter22" not in repr(resolved)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "https://user:pw@h.example:8443/mcp?token=t&region=eu#frag",
            "https://user:***@h.example:8443/mcp?token=***&region=***",
        ),
        ("redis://:hunter2@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
        ("redis://127.0.0.1:6379", "redis://127.0.0.1:6379"),
    ],
)
def test_a_masked_url_keeps_its_shape_and_still_parses(url: str, shown: str) -> None:
    assert mask_url(url) == shown
    assert urlsplit(shown).hostname == urlsplit(url).hostname and urlsplit(shown).port == urlsplit(url).port
