"""``notifications/tools/list_changed`` when skills are edited or tools change, in both protocol eras."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp.types as types
from anyio import wait_all_tasks_blocked
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.server.subscriptions import InMemorySubscriptionBus, ServerEvent
from serve_project import served_http, stdio_params, text, write_project, write_skill

from toolsift.registry import tool
from toolsift.serve._notify import ToolListAnnouncer

DEPLOY_SKILL = """\
---
name: deploy
description: Deploy the service.
---
Deploy it.
"""


async def test_serve_stdio_legacy_client_hears_skill_edits(tmp_path: Path) -> None:
    config = write_project(tmp_path)
    heard = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard.set()

    async with Client(stdio_params(config), mode="legacy", message_handler=on_message) as client:
        before = [t.name for t in (await client.list_tools()).tools]
        write_skill(tmp_path, "deploy", DEPLOY_SKILL)
        await heard.wait()
        after = [t.name for t in (await client.list_tools()).tools]
        assert sorted(after) == sorted([*before, "skill__deploy"])
        assert text(await client.call_tool("skill__deploy", {})).startswith("Deploy it.")


async def test_serve_http_modern_listener_hears_skill_edits(tmp_path: Path) -> None:
    config = write_project(tmp_path)
    async with served_http(config) as (url, _), Client(url) as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(tools_list_changed=True) as events:
            (tmp_path / "skills" / "review" / "SKILL.md").unlink()
            event = await events.__anext__()
        assert type(event).__name__ == "ToolsListChanged"
        names = [t.name for t in (await client.list_tools(cache_mode="refresh")).tools]
        assert "skill__review" not in names


async def test_serve_http_legacy_sessions_hear_registry_changes(tmp_path: Path) -> None:
    config = write_project(tmp_path)
    heard = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard.set()

    @tool(read_only=True)
    def shout(text: str) -> str:
        """Loud echo."""
        return text.upper()

    async with served_http(config) as (url, server), Client(url, mode="legacy", message_handler=on_message) as c:
        await c.list_tools()  # a round trip: the earlier notifications/initialized has been handled
        assert server.announcer.connections == 1
        server.registry.register(shout)
        await heard.wait()
        assert "builtin__shout" in [t.name for t in (await c.list_tools()).tools]
        assert text(await c.call_tool("builtin__shout", {"text": "hi"})) == "HI"


async def test_announcer_announces_only_visible_changes() -> None:
    bus = InMemorySubscriptionBus()
    published: list[ServerEvent] = []
    bus.subscribe(published.append)
    served = ["a"]
    announcer = ToolListAnnouncer(bus, lambda: tuple(served))
    async with anyio.create_task_group() as group:
        await group.start(announcer.run)
        announcer.changed()
        announcer.changed()
        await wait_all_tasks_blocked()
        assert published == []
        served.append("b")
        announcer.changed()
        await wait_all_tasks_blocked()
        assert len(published) == 1
        group.cancel_scope.cancel()
