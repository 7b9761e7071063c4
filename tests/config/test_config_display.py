"""Secrets masked in what a person is shown of a config entry: arguments, URLs, env, headers, nested blocks."""

from __future__ import annotations

import pytest

from toolsift._secrets._display import mask_settings, mask_url
from toolsift.config import HttpServer


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["--api-key", "sk-abcdef0123456789"], ["--api-key", "***"]),
        (["--token=abc", "--github-token", "${GH}"], ["--token=***", "--github-token", "${GH}"]),
        (["--password", "--verbose"], ["--password", "***"]),  # whatever follows a secret's flag is its value
        (["--key-file", "/run/key.pem", "--client-id", "app"], ["--key-file", "/run/key.pem", "--client-id", "app"]),
        (
            ["--author", "alice", "--max-tokens", "5", "--passage", "x"],
            ["--author", "alice", "--max-tokens", "5", "--passage", "x"],
        ),
        (
            ["API_KEY=abc", "API_URL=https://u:pw@h.example/x", "MODE=fast"],
            ["API_KEY=***", "API_URL=https://u:***@h.example/x", "MODE=fast"],
        ),
        (
            ["--url=https://h.example/sse?key=k", "Authorization: Bearer t", "localhost:8080"],
            ["--url=https://h.example/sse?key=***", "Authorization: ***", "localhost:8080"],
        ),
        (["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "ghp_0123456789abcdefghij0123"], ["***", "***"]),
        (
            ["/home/alice/projects/a-rather-long-project-folder-name-here"],
            ["/home/alice/projects/a-rather-long-project-folder-name-here"],
        ),
        (["--db", "secret://file/db.key"], ["--db", "secret://file/db.key"]),
    ],
)
def test_arguments_are_masked_where_they_hold_secrets(args: list[str], shown: list[str]) -> None:
    assert mask_settings({"command": "server", "args": args}) == {"command": "server", "args": shown}


def test_urls_lose_passwords_query_values_and_fragments() -> None:
    assert mask_url("https://user:pw@h.example:8443/mcp?token=t&region=eu#frag") == (
        "https://user:***@h.example:8443/mcp?token=***&region=***"
    )
    assert mask_url("https://[bad/") == "***"
    assert mask_url("https://h.example/mcp") == "https://h.example/mcp"


def test_env_headers_and_nested_blocks_are_masked_and_references_shown() -> None:
    entry = {
        "url": "https://h.example/mcp",
        "env": {"A": "literal", "B": "${B}", "C": 5},
        "headers": {"X-Key": "secret://env/KEY"},
        "auth": {"clientId": "app", "clientSecret": "cs", "privateKey": "${PEM}", "scopes": ["a"]},
        "serverUrl": "https://u:p@w.example/mcp",
        "timeout": 30,
    }
    assert mask_settings(entry) == {
        "url": "https://h.example/mcp",
        "env": {"A": "***", "B": "${B}", "C": "***"},
        "headers": {"X-Key": "secret://env/KEY"},
        "auth": {"clientId": "app", "clientSecret": "***", "privateKey": "${PEM}", "scopes": ["a"]},
        "serverUrl": "https://u:***@w.example/mcp",
        "timeout": 30,
    }


def test_a_server_configs_repr_masks_its_url() -> None:
    server = HttpServer.model_validate({"url": "https://u:pw@h.example/mcp?k=v"}).with_name("s")
    assert "pw" not in repr(server) and "https://u:***@h.example/mcp?k=***" in repr(server)
