"""Cache hints (SEP-2549) at 2026-07-28: ``public`` where every caller gets the same answer, else ``private``."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import httpx2
import mcp.types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import TypeAdapter
from serve_project import served_http, write_project
from servers import EXAMPLES

RELEASE_NOTES = EXAMPLES.parent / "skills" / "release-notes"


async def hints(client: Client, method: str) -> tuple[object, object]:
    request = types.Request[dict[str, Any], str](method=method, params={})
    answer = await client.session.send_request(request, TypeAdapter(dict[str, Any]))
    return answer.get("ttlMs"), answer.get("cacheScope")


def project(tmp_path: Path) -> Path:
    config = write_project(tmp_path)
    shutil.copytree(RELEASE_NOTES, tmp_path / "skills" / "release-notes")
    return config


async def test_lists_of_the_main_endpoint_are_public_and_a_scoped_endpoints_private(tmp_path: Path) -> None:
    async with served_http(project(tmp_path)) as (url, _):
        async with Client(url) as main:
            tools = await main.list_tools(cache_mode="bypass")
            assert (tools.ttl_ms, tools.cache_scope) == (0, "public")
            assert await hints(main, "skills/list") == (0, "public")
        async with Client(f"{url}/skills/release-notes") as scoped:
            tools = await scoped.list_tools(cache_mode="bypass")
            assert (tools.ttl_ms, tools.cache_scope) == (0, "private")
            assert await hints(scoped, "skills/list") == (0, "private")


async def test_every_list_of_a_token_guarded_server_is_private(tmp_path: Path) -> None:
    async with (
        served_http(project(tmp_path), token="s3cret-token") as (url, _),
        httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token"}) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        tools = await client.list_tools(cache_mode="bypass")
        assert (tools.ttl_ms, tools.cache_scope) == (0, "private")
        for method in ("skills/list", "resources/list"):
            assert await hints(client, method) == (0, "private")
        read = await client.read_resource("skill://release-notes/SKILL.md")
        assert (read.ttl_ms, read.cache_scope) == (0, "private")
