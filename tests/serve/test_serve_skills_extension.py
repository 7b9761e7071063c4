"""``toolsift serve`` offers its skills through the MCP Skills extension, read by the SDK's own client."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import Client, MCPError
from pydantic import TypeAdapter
from serve_project import general_server, stdio_params, text, write_project
from servers import EXAMPLES

from toolsift.serve import build_server

EXTENSION = "io.modelcontextprotocol/skills"
RELEASE_NOTES = EXAMPLES.parent / "skills" / "release-notes"


async def ask(client: Client, method: str, **params: Any) -> dict[str, Any]:
    """Send an extension request (the SDK has no typed method for them) and return the raw result."""
    request = types.Request[dict[str, Any], str](method=method, params=params)
    return await client.session.send_request(request, TypeAdapter(dict[str, Any]))


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = write_project(tmp_path)
    shutil.copytree(RELEASE_NOTES, tmp_path / "skills" / "release-notes")
    return path


def digest(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_serve_skills_extension_lists_gets_and_reads_skills(config: Path, mode: str) -> None:
    skills = config.parent / "skills"
    async with Client(stdio_params(config), mode=mode) as client:
        # Extension declarations are a 2026-07-28 field; the SDK drops it from a 2025-11-25 handshake,
        # where the methods answer all the same.
        declared = client.server_capabilities.extensions
        assert declared == ({EXTENSION: {"directoryRead": True}} if mode == "auto" else None)

        listed = await ask(client, "skills/list")
        entries = {entry["uri"]: entry for entry in listed["skills"]}
        # Only user-invocable skills are served, as for skill__<name>.
        assert sorted(entries) == ["skill://release-notes/SKILL.md", "skill://review/SKILL.md"]
        notes = entries["skill://release-notes/SKILL.md"]
        assert notes["frontmatter"]["name"] == "release-notes"
        assert notes["frontmatter"]["variables"]["audience"]["default"] == "users"
        skill_md = skills / "release-notes" / "SKILL.md"
        sections = skills / "release-notes" / "reference" / "sections.md"
        assert notes["resources"] == [
            {"uri": "skill://release-notes/SKILL.md", "digest": digest(skill_md), "size": skill_md.stat().st_size},
            {
                "uri": "skill://release-notes/reference/sections.md",
                "digest": digest(sections),
                "size": sections.stat().st_size,
            },
        ]

        got = await ask(client, "skills/get", uri="skill://release-notes/SKILL.md")
        assert got["skill"] == notes
        # Both results are cacheable at 2026-07-28 (SEP-2549); the handshake era knows no cache hints.
        hints = {"ttlMs": 0, "cacheScope": "public"} if mode == "auto" else {}
        for answer in (listed, got):
            assert {key: answer[key] for key in ("ttlMs", "cacheScope") if key in answer} == hints

        root = await ask(client, "resources/directory/read", uri="skill://release-notes")
        assert [(r["name"], r["mimeType"], r.get("size")) for r in root["resources"]] == [
            ("SKILL.md", "text/markdown", skill_md.stat().st_size),
            ("reference", "inode/directory", None),
        ]
        sub = await ask(client, "resources/directory/read", uri="skill://release-notes/reference")
        assert [r["uri"] for r in sub["resources"]] == ["skill://release-notes/reference/sections.md"]

        read = await client.read_resource("skill://release-notes/reference/sections.md")
        content = read.contents[0]
        assert isinstance(content, types.TextResourceContents)
        assert content.text == (skills / "release-notes" / "reference" / "sections.md").read_text()
        assert content.mime_type == "text/markdown"

        listed_resources = [str(r.uri) for r in (await client.list_resources()).resources]
        sizes = {str(r.uri): r.size for r in (await client.list_resources()).resources}
        assert sizes["skill://release-notes/reference/sections.md"] == sections.stat().st_size
        # Serving resources makes clients ask for templates too: none, rather than "method not found".
        assert (await client.list_resource_templates()).resource_templates == []
        assert "skill://release-notes/reference/sections.md" in listed_resources

        # The skill__<name> tool stays for clients without the extension, and names the files to read.
        tool = await client.call_tool("skill__release-notes", {"version": "2.1.0"})
        assert "skill://release-notes/reference/sections.md" in text(tool)
        assert tool.structured_content is not None
        assert tool.structured_content["files"] == ["skill://release-notes/reference/sections.md"]


REFUSED = [
    ("skills/get", "skill://nope/SKILL.md", "'skill://nope/SKILL.md' is not the SKILL.md of a skill"),
    ("skills/get", "skill://internal-notes/SKILL.md", "is not the SKILL.md of a skill this server serves"),
    ("skills/get", "skill://release-notes/reference/sections.md", "is not the SKILL.md of a skill"),
    ("resources/directory/read", "skill://release-notes/nope", "is not a folder of skill 'release-notes'"),
    ("resources/directory/read", "file:///etc", "is not a folder of a skill this server serves"),
]


async def test_serve_skills_extension_refuses_what_it_does_not_serve(config: Path) -> None:
    (config.parent / "secret.txt").write_text("top secret", encoding="utf-8")
    server = build_server(config)  # the refusals are the server's: reached in this process
    async with server, Client(server.sdk, mode="legacy") as client:
        for method, uri, message in REFUSED:
            with pytest.raises(MCPError, match=message) as caught:
                await ask(client, method, uri=uri)
            assert caught.value.error.code == types.INVALID_PARAMS
        # No file outside a served skill is read through its URI.
        for uri in (
            "skill://release-notes/../../secret.txt",
            "skill://release-notes/reference/../../review/SKILL.md",
            "skill://nope/SKILL.md",
        ):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
            assert caught.value.error.code == types.INVALID_PARAMS


async def test_serve_skills_extension_never_serves_a_hard_link_to_what_configures_toolsift(config: Path) -> None:
    secret = "TOKEN=sk-served-skill-0123456789"
    (config.parent / "api.env").write_text(secret + "\n", encoding="utf-8")
    project = json.loads(config.read_text(encoding="utf-8"))
    project["tools"] = {"mcpServers": {"api": general_server(envFile="api.env", lazy=True)}}
    config.write_text(json.dumps(project), encoding="utf-8")
    reference = config.parent / "skills" / "release-notes" / "reference"
    os.link(config.parent / "api.env", reference / "env.md")
    os.link(config, reference / "config.md")
    server = build_server(config)
    async with server, Client(server.sdk, mode="legacy") as client:
        listed = await ask(client, "skills/list")
        uris = [resource["uri"] for entry in listed["skills"] for resource in entry["resources"]]
        folder = await ask(client, "resources/directory/read", uri="skill://release-notes/reference")
        resources = [str(resource.uri) for resource in (await client.list_resources()).resources]
        tool = await client.call_tool("skill__release-notes", {"version": "2.1.0"})
        for name in ("env.md", "config.md"):
            uri = f"skill://release-notes/reference/{name}"
            assert uri not in uris and uri not in resources and uri not in text(tool)
            assert uri not in [resource["uri"] for resource in folder["resources"]]
            with pytest.raises(MCPError, match=f"skill 'release-notes' has no file 'reference/{name}'"):
                await client.read_resource(uri)
    assert "skill://release-notes/reference/sections.md" in uris


async def test_serve_skills_extension_reads_the_example_skills_scripts_folder(tmp_path: Path) -> None:
    config = write_project(tmp_path)
    shutil.copytree(EXAMPLES.parent / "skills" / "add-up", tmp_path / "skills" / "add-up")
    server = build_server(config)
    async with server, Client(server.sdk) as client:
        root = await ask(client, "resources/directory/read", uri="skill://add-up")
        assert ("skill://add-up/scripts", "inode/directory") in [(r["uri"], r["mimeType"]) for r in root["resources"]]
        scripts = await ask(client, "resources/directory/read", uri="skill://add-up/scripts")
        script = tmp_path / "skills" / "add-up" / "scripts" / "sum.py"
        assert [(r["uri"], r["size"]) for r in scripts["resources"]] == [
            ("skill://add-up/scripts/sum.py", script.stat().st_size)
        ]
        read = await client.read_resource("skill://add-up/scripts/sum.py")
        content = read.contents[0]
        assert isinstance(content, types.TextResourceContents) and content.text == script.read_text()
