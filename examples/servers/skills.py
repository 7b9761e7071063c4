"""An MCP server that offers skills through the MCP Skills extension (``io.modelcontextprotocol/skills``).

It serves three skills from memory, each file a ``skill://`` resource:
``skill://git-workflow`` (with ``reference/branches.md``) and two skills named
``refunds`` at different paths (``acme/billing/refunds``, ``acme/support/refunds``),
which a host must tell apart. ``skills/list``, ``skills/get`` and ``resources/read``
answer; it does not declare ``directoryRead``.

Flags that make it break the draft's promises, to see a host refuse a skill:

    --stale-digest        list a wrong digest for git-workflow's SKILL.md
    --wrong-size          list a wrong size for git-workflow's SKILL.md
    --frontmatter-lies    list a description that git-workflow's SKILL.md does not have
    --no-resources        list the billing refunds skill without its ``resources``

Run: ``python examples/servers/skills.py`` (stdio).
"""

from __future__ import annotations

import argparse
import hashlib
from typing import Any

import anyio
import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

EXTENSION = "io.modelcontextprotocol/skills"

# skill path -> (front matter, {file path: text}); SKILL.md is built from the front matter and a body.
SKILLS: dict[str, tuple[dict[str, Any], str, dict[str, str]]] = {
    "git-workflow": (
        {"name": "git-workflow", "description": "Follow the team's Git conventions.", "allowed-tools": "read_file"},
        "Name branches as `reference/branches.md` says, then commit.\n",
        {"reference/branches.md": "# Branches\n\nfeature/<ticket>-<words>, fix/<ticket>.\n"},
    ),
    "acme/billing/refunds": (
        {"name": "refunds", "description": "Refund a billing error."},
        "Check the invoice, then refund the difference.\n",
        {},
    ),
    "acme/support/refunds": (
        {"name": "refunds", "description": "Refund a customer as support."},
        "Apologise, then refund in full.\n",
        {},
    ),
}


def skill_md(front: dict[str, Any], body: str) -> str:
    lines = [f"{key}: {value}" for key, value in front.items()]
    return "---\n" + "\n".join(lines) + "\n---\n" + body


def files(path: str) -> dict[str, str]:
    """Every file of a skill by URI: SKILL.md and its bundled files."""
    front, body, bundled = SKILLS[path]
    texts = {"SKILL.md": skill_md(front, body), **bundled}
    return {f"skill://{path}/{name}": text for name, text in texts.items()}


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


class UriParams(types.RequestParams):
    uri: str


class CursorParams(types.RequestParams):
    cursor: str | None = None


def build(args: argparse.Namespace) -> Server[Any]:
    def entry(path: str) -> dict[str, Any]:
        front = dict(SKILLS[path][0])
        if args.frontmatter_lies and path == "git-workflow":
            front["description"] = "Something the file does not say."
        listed = {uri: (digest(text), len(text.encode())) for uri, text in files(path).items()}
        first = "skill://git-workflow/SKILL.md"
        if args.stale_digest and path == "git-workflow":
            listed[first] = (digest("an older version"), listed[first][1])
        if args.wrong_size and path == "git-workflow":
            listed[first] = (listed[first][0], listed[first][1] + 1)
        found: dict[str, Any] = {"uri": f"skill://{path}/SKILL.md", "frontmatter": front}
        if not (args.no_resources and path == "acme/billing/refunds"):
            found["resources"] = [
                {"uri": uri, "digest": hashed, "size": size} for uri, (hashed, size) in listed.items()
            ]
        return found

    async def list_skills(ctx: ServerRequestContext[Any], params: CursorParams) -> dict[str, Any]:
        return {"skills": [entry(path) for path in SKILLS]}

    async def get_skill(ctx: ServerRequestContext[Any], params: UriParams) -> dict[str, Any]:
        path = params.uri.removeprefix("skill://").removesuffix("/SKILL.md")
        if path not in SKILLS or not params.uri.endswith("/SKILL.md"):
            raise MCPError(types.INVALID_PARAMS, f"{params.uri!r} is not a skill of this server")
        return {"skill": entry(path)}

    async def read_resource(ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams) -> Any:
        every = {uri: text for path in SKILLS for uri, text in files(path).items()}
        uri = str(params.uri)
        if uri not in every:
            raise MCPError(types.INVALID_PARAMS, f"Unknown resource {uri!r}")
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, text=every[uri])])

    async def list_resources(ctx: ServerRequestContext[Any], params: Any) -> types.ListResourcesResult:
        every = [uri for path in SKILLS for uri in files(path)]
        return types.ListResourcesResult(resources=[types.Resource(uri=uri, name=uri) for uri in every])

    async def list_templates(ctx: ServerRequestContext[Any], params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[])

    server: Server[Any] = Server(
        "skills",
        on_read_resource=read_resource,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
    )
    server.extensions[EXTENSION] = {}
    server.add_request_handler("skills/list", CursorParams, list_skills)
    server.add_request_handler("skills/get", UriParams, get_skill)
    return server


async def serve(args: argparse.Namespace) -> None:
    server = build(args)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stale-digest", action="store_true")
    parser.add_argument("--wrong-size", action="store_true")
    parser.add_argument("--frontmatter-lies", action="store_true")
    parser.add_argument("--no-resources", action="store_true")
    anyio.run(serve, parser.parse_args())


if __name__ == "__main__":
    main()
