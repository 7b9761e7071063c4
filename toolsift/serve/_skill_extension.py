"""The MCP Skills extension (``io.modelcontextprotocol/skills``, SEP-2640 draft) on the serving side.

Every served skill on disk is published as the draft has it: each file of its
folder is a resource ``skill://<name>/<path>`` with its size; ``skills/list`` enumerates the
skills (one page) with their front matter verbatim and a SHA-256 digest and size per
file; ``skills/get`` answers for one ``SKILL.md`` URI; ``resources/directory/read``
lists a folder's direct children (``directoryRead: true``); ``resources/read``
and ``resources/list`` serve and list the files beside whatever else the server
serves (a gateway's upstream resources). A skill built in code, with no folder,
has no files to publish and is left out; clients without the extension keep
the ``skill__<name>`` tools.

Followed text: the draft at experimental-ext-skills ``docs/sep-draft-skills-extension.md``
(commit f1f66fa, a copy of modelcontextprotocol#2640 at 0eb05fe, 2026-08-05).
"""

from __future__ import annotations

import base64
import json
import mimetypes
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, final

import anyio
import frontmatter
import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext

from .._skill_files import SKILLS_EXTENSION, sha256_digest
from ..builtins._internal import FolderFiles
from ..skills import Skill
from ._skills import FilesOf

__all__ = ["DIRECTORY_MIME", "SKILL_SCHEME", "SkillPublisher", "skill_uri"]

SKILL_SCHEME = "skill://"
DIRECTORY_MIME = "inode/directory"
# Markdown is what every skill is written in; mimetypes does not know it everywhere.
_KNOWN_TYPES = {".md": "text/markdown"}


def skill_uri(skill: str, path: str = "SKILL.md") -> str:
    """The resource URI of ``path`` in the served skill ``skill`` (``skill://<name>/<path>``)."""
    return f"{SKILL_SCHEME}{skill}/{path}" if path else f"{SKILL_SCHEME}{skill}"


def _mime(path: str) -> str:
    for suffix, mime in _KNOWN_TYPES.items():
        if path.endswith(suffix):
            return mime
    return mimetypes.guess_type(path)[0] or "application/octet-stream"


async def _sizes(files: FolderFiles, paths: Sequence[str]) -> dict[str, int]:
    """The size in bytes of each of a skill's files (what its digest covers), read off the disk in a worker thread."""
    return await anyio.to_thread.run_sync(lambda: {path: files.resolve(path).stat().st_size for path in paths})


async def _no_templates(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams) -> Any:
    return types.ListResourceTemplatesResult(resource_templates=[])


class UriParams(types.RequestParams):
    """Params of ``skills/get`` and ``resources/directory/read``: a URI (and a cursor, unused: one page)."""

    uri: str
    cursor: str | None = None


class CursorParams(types.RequestParams):
    """Params of ``skills/list``: an optional cursor (the listing is one page)."""

    cursor: str | None = None


@dataclass(frozen=True)
class _Published:
    skill: Skill
    files: FolderFiles


@final
class SkillPublisher:
    """Publishes the served skills through the extension on one SDK ``Server``.

    Args:
        skills: The skills to publish, asked at each request (a reload's skills are served at once).
        files_of: A skill's files on disk, kept off what configures toolsift (``Assembly.skill_files``).
    """

    def __init__(self, skills: Callable[[], Sequence[Skill]], files_of: FilesOf) -> None:
        self._skills = skills
        self._files_of = files_of

    def install(self, server: Server[Any]) -> None:
        """Declare the extension on ``server`` and add its methods, keeping the resource handlers it has."""
        server.extensions[SKILLS_EXTENSION] = {"directoryRead": True}
        server.add_request_handler("skills/list", CursorParams, self._list_skills)
        server.add_request_handler("skills/get", UriParams, self._get_skill)
        server.add_request_handler("resources/directory/read", UriParams, self._read_directory)
        read = server.get_request_handler("resources/read")
        listing = server.get_request_handler("resources/list")
        server.add_request_handler(
            "resources/read", types.ReadResourceRequestParams, self._reader(read.handler if read else None)
        )
        server.add_request_handler(
            "resources/list", types.PaginatedRequestParams, self._lister(listing.handler if listing else None)
        )
        if server.get_request_handler("resources/templates/list") is None:
            # Serving resources at all makes clients ask for templates; skills have none.
            server.add_request_handler("resources/templates/list", types.PaginatedRequestParams, _no_templates)

    # -- what is published -------------------------------------------------------------------

    def _published(self) -> dict[str, _Published]:
        found: dict[str, _Published] = {}
        for skill in self._skills():
            files = self._files_of(skill)
            if files is not None:
                found[skill.name] = _Published(skill, files)
        return found

    def _find(self, uri: str) -> tuple[_Published, str] | None:
        """The skill a ``skill://`` URI lies in and the path inside it ('' for the skill's root)."""
        if not uri.startswith(SKILL_SCHEME):
            return None
        name, _, path = uri.removeprefix(SKILL_SCHEME).partition("/")
        published = self._published().get(name)
        return (published, path) if published is not None else None

    @staticmethod
    async def _entry(published: _Published) -> dict[str, Any]:
        """The skill's entry: URI, front matter verbatim (as JSON), and every file with its digest."""
        files = published.files
        name = published.skill.name

        def compute() -> dict[str, Any]:
            resources = []
            for path in files.names():
                data = files.resolve(path).read_bytes()
                resources.append({"uri": skill_uri(name, path), "digest": sha256_digest(data), "size": len(data)})
            text = files.resolve("SKILL.md").read_text(encoding="utf-8")
            # YAML may hold dates; JSON carries them as text.
            written = json.loads(json.dumps(frontmatter.loads(text).metadata, default=str))
            return {"uri": skill_uri(name), "frontmatter": written, "resources": resources}

        return await anyio.to_thread.run_sync(compute)

    # -- handlers -----------------------------------------------------------------------------

    async def _list_skills(self, ctx: ServerRequestContext[Any], params: CursorParams) -> dict[str, Any]:
        return {"skills": [await self._entry(published) for published in self._published().values()]}

    async def _get_skill(self, ctx: ServerRequestContext[Any], params: UriParams) -> dict[str, Any]:
        found = self._find(params.uri)
        if found is None or found[1] != "SKILL.md":
            raise MCPError(types.INVALID_PARAMS, f"{params.uri!r} is not the SKILL.md of a skill this server serves")
        return {"skill": await self._entry(found[0])}

    async def _read_directory(self, ctx: ServerRequestContext[Any], params: UriParams) -> dict[str, Any]:
        found = self._find(params.uri.rstrip("/"))
        if found is None:
            raise MCPError(types.INVALID_PARAMS, f"{params.uri!r} is not a folder of a skill this server serves")
        published, path = found
        prefix = f"{path}/" if path else ""
        names = published.files.names()
        if path and not any(name.startswith(prefix) for name in names):
            raise MCPError(types.INVALID_PARAMS, f"{params.uri!r} is not a folder of skill {published.skill.name!r}")
        children: dict[str, bool] = {}  # child name -> is a folder
        for name in names:
            if name.startswith(prefix):
                child, _, rest = name.removeprefix(prefix).partition("/")
                children[child] = children.get(child, False) or bool(rest)
        sizes = await _sizes(published.files, [prefix + child for child, folder in children.items() if not folder])
        resources = [
            types.Resource(
                uri=skill_uri(published.skill.name, prefix + child),
                name=child,
                mime_type=DIRECTORY_MIME if folder else _mime(child),
                size=None if folder else sizes[prefix + child],
            ).model_dump(by_alias=True, exclude_none=True)
            for child, folder in sorted(children.items())
        ]
        return {"resources": resources}

    def _reader(
        self, upstream: Callable[[ServerRequestContext[Any], Any], Awaitable[Any]] | None
    ) -> Callable[[ServerRequestContext[Any], types.ReadResourceRequestParams], Awaitable[Any]]:
        async def read(ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams) -> Any:
            uri = str(params.uri)
            found = self._find(uri)
            if found is None:
                if upstream is None or uri.startswith(SKILL_SCHEME):
                    raise MCPError(types.INVALID_PARAMS, f"Unknown resource {uri!r}")
                return await upstream(ctx, params)
            published, path = found
            if path not in published.files.names():
                raise MCPError(types.INVALID_PARAMS, f"skill {published.skill.name!r} has no file {path!r}")
            data = await published.files.read(path)
            mime = _mime(path)
            try:
                content: types.TextResourceContents | types.BlobResourceContents = types.TextResourceContents(
                    uri=uri, mime_type=mime, text=data.decode("utf-8")
                )
            except UnicodeDecodeError:
                content = types.BlobResourceContents(uri=uri, mime_type=mime, blob=base64.b64encode(data).decode())
            return types.ReadResourceResult(contents=[content])

        return read

    def _lister(
        self, upstream: Callable[[ServerRequestContext[Any], Any], Awaitable[Any]] | None
    ) -> Callable[[ServerRequestContext[Any], types.PaginatedRequestParams], Awaitable[Any]]:
        async def listing(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams) -> Any:
            page = await upstream(ctx, params) if upstream is not None else types.ListResourcesResult(resources=[])
            if params.cursor is not None:
                return page  # the skills' files come with the first page
            own = [
                types.Resource(
                    uri=skill_uri(name, path),
                    name=published.skill.name if path == "SKILL.md" else path,
                    description=published.skill.description if path == "SKILL.md" else None,
                    mime_type=_mime(path),
                    size=size,
                )
                for name, published in self._published().items()
                for path, size in (await _sizes(published.files, published.files.names())).items()
            ]
            return page.model_copy(update={"resources": [*own, *page.resources]})

        return listing
