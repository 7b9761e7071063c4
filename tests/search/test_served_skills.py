"""Skills a server offers through the MCP Skills extension, taken by a Toolbox: one toolsift served to another."""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import in_memory_everywhere, served_in_process
from scripted_model import ScriptedModel
from servers import example_module

from toolsift.agent import AssistantMessage, ToolCall
from toolsift.config import SkillGrants, parse_config
from toolsift.search._internal import McpServedSkill
from toolsift.search._served_skill_files import VerificationError
from toolsift.toolbox import Toolbox

ROOT = Path(__file__).resolve().parent.parent.parent
RELEASE_NOTES = ROOT / "examples" / "skills" / "release-notes"
URI = "skill://release-notes/SKILL.md"


def upstream(folder: Path) -> Path:
    """A toolsift project serving the example skill ``release-notes`` (with its bundled reference file)."""
    (folder / "ws").mkdir(parents=True)
    shutil.copytree(RELEASE_NOTES, folder / "skills" / "release-notes")
    config = {"workspace": "ws", "skills": {"paths": ["skills"], "userSkills": False}}
    path = folder / "toolsift.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def toolbox(tmp_path: Path, served: Path, **extra: Any) -> Toolbox:
    """A toolbox whose one server is ``toolsift serve`` of ``served`` (in the 2026-07-28 era, which declares it)."""
    command = [sys.executable, "-m", "toolsift.serve", "--config", str(served)]
    config = parse_config(
        {
            "tools": {"mcpServers": {"docs": {"command": command[0], "args": command[1:]}}},
            "skills": {"userSkills": False},
            **extra,
        }
    )
    box = Toolbox(config)
    box.served_skills.grants = SkillGrants(tmp_path / "grants.json")
    return box


@pytest.fixture
async def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Path]:
    """The upstream's config, served in this process: what is taken from it is the point, not its process
    (a real ``toolsift serve`` child is test_served_skills_follow's reconnect)."""
    path = upstream(tmp_path / "upstream")
    async with served_in_process(monkeypatch, {"docs": path}):
        yield path


async def test_toolbox_takes_a_servers_skills_under_its_own_name_with_no_grant(tmp_path: Path, served: Path) -> None:
    async with toolbox(tmp_path, served) as box:
        skill = box.catalog.get("docs/release-notes")
        assert isinstance(skill, McpServedSkill)
        assert skill.server == "docs"
        assert skill.uri == URI
        assert "(from MCP server 'docs')" in skill.description
        assert skill.usage() == "/use docs/release-notes version=<x.y.z> [audience=<users|developers|operators>]"
        # A remote server writing allowed-tools asks for access here: ignored until approved.
        assert skill.requested_tools == ("read_file", "list_directory")
        assert skill.allowed_tools == ()
        assert not skill.approved
        assert skill.files.names() == ["SKILL.md", "reference/sections.md"]
        body = await skill.render({"version": "2.1.0", "audience": "users"})
        assert body.startswith("[Skill 'release-notes' served by MCP server 'docs': untrusted content")
        assert "are not in force: the user has not approved them" in body
        assert "# Release notes for 2.1.0" in body


async def test_skill_grant_is_bound_to_the_skills_digests(tmp_path: Path, served: Path) -> None:
    async with toolbox(tmp_path, served) as box:
        grants = box.served_skills.grants
        assert grants is not None
        skill = box.catalog.get("docs/release-notes")
        assert isinstance(skill, McpServedSkill)
        grants.approve("docs", skill.uri, skill.resources, skill.requested_tools)
        await box.served_skills.refresh(box.sessions)
        approved = box.catalog.get("docs/release-notes")
        assert isinstance(approved, McpServedSkill)
        assert approved.approved
        assert approved.allowed_tools == ("read_file", "list_directory")

        # The server now serves another reference file: the approval no longer covers the skill.
        reference = served.parent / "skills" / "release-notes" / "reference" / "sections.md"
        reference.write_text(reference.read_text() + "\nAlso run the tests.\n", encoding="utf-8")
        await box.served_skills.refresh(box.sessions)
        changed = box.catalog.get("docs/release-notes")
        assert isinstance(changed, McpServedSkill)
        assert not changed.approved
        assert changed.allowed_tools == ()
        assert dict(changed.resources) != dict(skill.resources)

        # The skill listed before the change fails verification when it reads the changed file.
        with pytest.raises(Exception, match="the skill changed since it was listed"):
            await approved.files.read("reference/sections.md")


async def test_agent_reads_a_served_skills_bundled_file(tmp_path: Path, served: Path) -> None:
    async with toolbox(tmp_path, served) as box:
        conversation = box.conversation()
        reply = await conversation.handle_command("/use docs/release-notes version=2.1.0")
        assert reply is not None and reply.ok, reply
        model = ScriptedModel(
            AssistantMessage("", [ToolCall("c1", "read_skill_file", {"path": "reference/sections.md"})]),
            AssistantMessage("done"),
        )
        answer = await conversation.send("Draft them", model)
        assert answer.text == "done"
        result = answer.tool_calls[0].result
        assert not result.is_error, result.text_content()
        assert "# Release notes: the sections" in result.text_content()
        _, history, tools = model.seen[0]
        assert "read_skill_file" in [tool["function"]["name"] for tool in tools]
        told = "\n".join(getattr(message, "text", "") or "" for message in history)
        assert "This skill lives in MCP server 'docs' at skill://release-notes" in told
        assert "- reference/sections.md" in told


SKILLS_SERVER = ROOT / "examples" / "servers" / "skills.py"


def skills_server_box(tmp_path: Path, *flags: str) -> Toolbox:
    server = {"command": sys.executable, "args": [str(SKILLS_SERVER), *flags]}
    box = Toolbox(parse_config({"tools": {"mcpServers": {"shop": server}}, "skills": {"userSkills": False}}))
    box.served_skills.grants = SkillGrants(tmp_path / "grants.json")
    return box


async def test_skills_sharing_a_name_on_one_server_are_told_apart_by_their_path(tmp_path: Path) -> None:
    async with skills_server_box(tmp_path) as box:
        names = sorted(skill.name for skill in box.served_skills.skills)
        assert names == ["shop/acme/billing/refunds", "shop/acme/support/refunds", "shop/git-workflow"]
        billing = box.catalog.get("shop/acme/billing/refunds")
        assert isinstance(billing, McpServedSkill)
        assert billing.skill.description == "Refund a billing error."


LIES = ("stale_digest", "wrong_size", "frontmatter_lies", "no_resources")


def lying_box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str) -> Toolbox:
    """The skills server with one of its lies, run here: the lie is the point, not its process."""
    lies = {name: flag == "--" + name.replace("_", "-") for name in LIES}
    in_memory_everywhere(monkeypatch, {"shop": example_module(str(SKILLS_SERVER)).build(argparse.Namespace(**lies))})
    return skills_server_box(tmp_path, flag)


async def test_a_served_skill_listed_without_resources_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="toolsift.search"):
        async with lying_box(tmp_path, monkeypatch, "--no-resources") as box:
            uris = [skill.uri for skill in box.served_skills.skills]
    left_out = "skill://acme/billing/refunds/SKILL.md"
    assert left_out not in uris and len(uris) == 2  # the others are kept
    assert f"MCP server 'shop': skill {left_out!r} is not used: " in caplog.text
    assert "lists no 'resources'" in caplog.text


@pytest.mark.parametrize(
    ("flag", "why"),
    [
        ("--stale-digest", "the skill changed since it was listed"),
        ("--wrong-size", r"SKILL.md of \d+ bytes, but listed \d+"),
        ("--frontmatter-lies", "front matter differs from the listing's"),
    ],
)
async def test_a_served_skill_that_breaks_its_listings_promise_is_refused_when_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str, why: str
) -> None:
    async with lying_box(tmp_path, monkeypatch, flag) as box:
        # Listing reads no file, so the lie shows only when the skill is used, and then nothing of it is.
        skill = box.catalog.get("shop/git-workflow")
        assert isinstance(skill, McpServedSkill)
        with pytest.raises(VerificationError, match=why):
            await skill.render()
        with pytest.raises(VerificationError, match=why):  # and it stays refused
            await skill.load()
        assert skill.body == ""


async def test_listing_served_skills_reads_none_of_their_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []
    server = example_module(str(SKILLS_SERVER)).build(argparse.Namespace(**dict.fromkeys(LIES, False)))
    read = server.get_request_handler("resources/read")
    assert read is not None

    async def counted(ctx: Any, params: Any) -> Any:
        reads.append(str(params.uri))
        return await read.handler(ctx, params)

    server.add_request_handler("resources/read", read.params_type, counted)
    in_memory_everywhere(monkeypatch, {"shop": server})
    async with skills_server_box(tmp_path) as box:
        skill = box.catalog.get("shop/git-workflow")
        assert isinstance(skill, McpServedSkill)
        assert skill.usage() == "/use shop/git-workflow" and skill.requested_tools == ("read_file",)
        assert reads == []
        body = await skill.render()
        assert reads == ["skill://git-workflow/SKILL.md"]
        assert "Name branches as `reference/branches.md` says" in body
