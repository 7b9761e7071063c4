"""A model with native tool search is given the catalogue as the server lists it now: a tool a server adds
through ``tools/list_changed`` is deferred (and found by ``search_tools``) from the next request on, and a tool
it removes leaves both. The server is a real child process (``examples/servers/faulty.py`` over stdio)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import openai
import pytest

from toolsift.agent.llm.openai_responses import OpenAIResponsesModel
from toolsift.toolbox import Toolbox

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _provider import ProviderEndpoint, Reply

SERVERS = Path(__file__).resolve().parents[2] / "examples" / "servers"


@asynccontextmanager
async def responses_model(url: str) -> AsyncIterator[OpenAIResponsesModel]:
    async with openai.AsyncOpenAI(api_key="k", base_url=url + "/v1", max_retries=0) as client:
        yield OpenAIResponsesModel("gpt-5.4", client=client)


def deferred_names(request: dict[str, Any]) -> set[str]:
    """The functions a Responses request declares with deferred loading (inside namespaces or not)."""
    found = set()
    for tool in request["tools"]:
        inner = tool.get("tools", [tool]) if tool.get("type") == "namespace" else [tool]
        found.update(t["name"] for t in inner if t.get("defer_loading"))
    return found


@pytest.fixture
async def box(tmp_path: Path) -> AsyncIterator[Toolbox]:
    config = tmp_path / "toolsift.json"
    # A catalogue that grows by design: tools added after the first listing are pinned, not held back.
    faulty = {"command": sys.executable, "args": [str(SERVERS / "faulty.py")], "pinTools": "accept"}
    servers = {"faulty": faulty}
    config.write_text(json.dumps({"tools": {"mcpServers": servers}, "skills": {"userSkills": False}}))
    async with Toolbox.from_config(config) as started:
        yield started


async def registered(box: Toolbox, name: str, present: bool) -> None:
    """Wait until ``name`` is (or is no longer) registered, checking at each change of the registry."""
    changed = anyio.Event()
    unsubscribe = box.registry.subscribe(lambda _: changed.set())
    try:
        while (name in box.registry) != present:
            await changed.wait()
            changed = anyio.Event()
    finally:
        unsubscribe()


async def search(box: Toolbox, query: str) -> list[str]:
    return [name for hit in await box.index.asearch(query, limit=3) for name in hit.names]


async def test_a_list_changed_updates_the_index_and_what_a_deferring_model_is_given(box: Toolbox) -> None:
    session = box.sessions["faulty"]
    script = [Reply(text="one"), Reply(text="two"), Reply(text="three")]
    async with ProviderEndpoint(script) as endpoint, responses_model(endpoint.url) as model:
        conversation = box.conversation(instructions="Be brief.")
        await conversation.send("hello", model)
        assert "faulty__zebra_count" not in deferred_names(endpoint.requests[0].body)
        assert "faulty__echo" in deferred_names(endpoint.requests[0].body)

        assert not (await session.call_tool("add_tool", {"name": "zebra_count"})).is_error
        await registered(box, "faulty__zebra_count", True)
        assert (await search(box, "zebra_count"))[:1] == ["faulty__zebra_count"]
        await conversation.send("again", model)
        assert "faulty__zebra_count" in deferred_names(endpoint.requests[1].body)

        assert not (await session.call_tool("remove_tool", {"name": "zebra_count"})).is_error
        await registered(box, "faulty__zebra_count", False)
        assert "faulty__zebra_count" not in await search(box, "zebra count")
        await conversation.send("once more", model)
        assert "faulty__zebra_count" not in deferred_names(endpoint.requests[2].body)
        assert "faulty__echo" in deferred_names(endpoint.requests[2].body)
