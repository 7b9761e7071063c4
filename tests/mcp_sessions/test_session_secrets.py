"""Secrets toolsift resolved for a server are masked when the server echoes them back."""

from __future__ import annotations

import mcp.types as types
import pytest
from mcp_helpers import in_memory, local_server, local_server_object

from toolsift._redaction import Redactor
from toolsift.mcp_sessions import McpSession
from toolsift.mcp_sessions._masking import mask_result
from toolsift.registry import ToolRegistry, ToolResult

SECRET = "sk-live-0123456789abcdef"


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("TOOLSIFT_TEST_SERVICE_TOKEN", SECRET)
    return {"SERVICE_TOKEN": "${TOOLSIFT_TEST_SERVICE_TOKEN}"}


def strings(result: ToolResult) -> list[str]:
    """Every text the model could read in ``result``."""
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    return [*texts, repr(result.structured_content)]


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("leak_text", "the value is [redacted]"),
        ("leak_error", "login failed with [redacted]"),
        ("leak_rpc_error", "token [redacted] was refused"),
    ],
)
async def test_session_masks_an_echoed_secret_in_result_text_and_errors(
    secret_env: dict[str, str], tool: str, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = ToolRegistry()
    config = local_server(
        "echoer", "session_server.py", env=secret_env, internal_only=False, protocol="legacy", trust="trusted"
    )
    # The server runs in this process, so it reads the value from here (the next test's child gets it from
    # the config's env); the session resolves the config's env and masks what it resolved all the same.
    monkeypatch.setenv("SERVICE_TOKEN", SECRET)
    options = in_memory({"echoer": local_server_object("session_server.py")})
    async with McpSession(config, registry=registry, options=options):
        result = await registry.execute(f"echoer__{tool}", {"name": "SERVICE_TOKEN"})
    assert result.is_error is (tool != "leak_text")
    assert any(expected in text for text in strings(result))
    assert all(SECRET not in text for text in strings(result))


async def test_session_masks_an_echoed_secret_in_structured_content(secret_env: dict[str, str]) -> None:
    config = local_server("echoer", "session_server.py", env=secret_env)
    async with McpSession(config) as session:
        result = await session.call_tool("leak_structured", {"name": "SERVICE_TOKEN"})
    assert result.structured_content == {"value": "[redacted]"}
    assert all(SECRET not in text for text in strings(result))


def test_mask_result_covers_links_and_embedded_text_and_keeps_clean_results() -> None:
    redact = Redactor(["Bearer tok-abcdef-123456"])
    link = types.ResourceLink(uri="https://x.example/?t=tok-abcdef-123456", name="n", description="tok-abcdef-123456")
    embedded = types.EmbeddedResource(resource=types.TextResourceContents(uri="file:///a", text="tok-abcdef-123456"))
    masked = mask_result(
        ToolResult(content=[link, embedded], structured_content={"tok-abcdef-123456": [1, "x"]}), redact
    )
    assert masked.content[0] == types.ResourceLink(
        uri="https://x.example/?t=[redacted]", name="n", description="[redacted]"
    )
    assert isinstance(masked.content[1], types.EmbeddedResource)
    assert masked.content[1].resource == types.TextResourceContents(uri="file:///a", text="[redacted]")
    assert masked.structured_content == {"[redacted]": [1, "x"]}
    clean = ToolResult(content=[types.TextContent(text="nothing to hide")], structured_content={"a": ["b"]})
    assert mask_result(clean, redact) is clean
