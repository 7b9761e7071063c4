"""The files of a skill served over MCP: read from the origin server only, each checked against the listing.

A host reads a served skill's files only when the skill is used, and checks
every read against what the listing promised: the file is one it names, of
the size it gives, with its SHA-256 digest. Content that fails a check is
never used.
"""

from __future__ import annotations

import base64
import json
import posixpath
from collections.abc import Mapping
from typing import Any, Protocol, final

import frontmatter
import mcp.types as types

from .._exceptions import PolicyDenied, SkillError
from .._skill_files import SKILL_FILE_TOOL, sha256_digest

__all__ = ["ServedSkillFiles", "SkillsSession", "VerificationError", "front_matter", "is_size"]


class SkillsSession(Protocol):
    """What a served skill needs of an MCP session (``McpSession`` fits)."""

    @property
    def name(self) -> str: ...

    def declares(self, extension: str) -> bool | None:
        """Whether the server declares ``extension`` (None: the connection's era cannot say)."""
        ...

    async def extension_request(self, extension: str, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Send an extension's request; the raw result."""
        ...

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        """Read one resource."""
        ...


class VerificationError(SkillError):
    """Raised when a served skill's file is not what its listing promised (digest, front matter, unlisted)."""


@final
class ServedSkillFiles:
    """The files of a skill that arrived over MCP: read from its origin server, each checked against its digest.

    Args:
        session: The origin server's session.
        uri: The skill's ``SKILL.md`` URI.
        resources: Every file the listing names: URI -> digest.
        sizes: The sizes in bytes the listing gives: URI -> size.
    """

    def __init__(
        self, session: SkillsSession, uri: str, resources: Mapping[str, str], sizes: Mapping[str, int] | None = None
    ) -> None:
        self._session = session
        self._root = uri.removesuffix("/SKILL.md")
        self._resources = dict(resources)
        self._sizes = dict(sizes or {})
        self.where = f"MCP server {session.name!r} at {self._root}"

    def names(self) -> list[str]:
        """The files the listing names, relative to the skill's root."""
        prefix = f"{self._root}/"
        return sorted(uri.removeprefix(prefix) for uri in self._resources if uri.startswith(prefix))

    def uri_of(self, path: str) -> str:
        """The URI of the skill's file ``path``, resolved against the skill's root.

        Raises:
            PolicyDenied: ``path`` is not a relative path inside the skill.
        """
        if not isinstance(path, str) or not path or "\0" in path:
            raise PolicyDenied("skill-folder", f"expected a path inside the skill, got {path!r}", tool=SKILL_FILE_TOOL)
        normal = posixpath.normpath(path)
        if normal.startswith(("/", "..")) or "://" in path:
            raise PolicyDenied(
                "skill-folder",
                f"the path {path!r} leaves the skill at {self._root}; {SKILL_FILE_TOOL} reads only the files "
                "of the active skill",
                tool=SKILL_FILE_TOOL,
            )
        return f"{self._root}/{normal}"

    async def read(self, path: str) -> bytes:
        """The bytes of ``path``, read from the origin server and checked against the listing.

        Raises:
            PolicyDenied: ``path`` leaves the skill.
            FileNotFoundError: The listing names no such file.
            VerificationError: The server sent something other than what its listing promised.
        """
        uri = self.uri_of(path)
        digest = self._resources.get(uri)
        if digest is None:
            raise FileNotFoundError(path)
        result = await self._session.read_resource(uri)
        data = _content_bytes(result, uri)
        size = self._sizes.get(uri)
        if size is not None and len(data) != size:
            raise VerificationError(
                f"MCP server {self._session.name!r} sent {uri} of {len(data)} bytes, but listed {size}; the skill "
                "changed since it was listed and is not used until it is taken again"
            )
        if sha256_digest(data) != digest:
            raise VerificationError(
                f"MCP server {self._session.name!r} sent {uri} with digest {sha256_digest(data)}, but listed "
                f"{digest}; the skill changed since it was listed and is not used until it is taken again"
            )
        return data


def _content_bytes(result: types.ReadResourceResult, uri: str) -> bytes:
    for content in result.contents:
        if isinstance(content, types.TextResourceContents):
            return content.text.encode("utf-8")
        if isinstance(content, types.BlobResourceContents):
            return base64.b64decode(content.blob)
    raise VerificationError(f"{uri}: the server returned no content")


def is_size(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def front_matter(text: str) -> Any:
    """A SKILL.md's front matter as a listing carries it (YAML dates become text, as in JSON)."""
    return json.loads(json.dumps(frontmatter.loads(text).metadata, default=str))
