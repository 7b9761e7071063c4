"""A skill's own files: where a skill lives, what it bundles, and ``read_skill_file`` to read them.

Published skills point at files beside their ``SKILL.md`` (``reference/*.md``,
``scripts/*.py``). The model gets the skill's body; this module gives it the
rest, and nothing else: ``read_skill_file`` reads one file of the *active*
skill, confined to that skill's folder by the workspace check every builtin
file tool uses (``..``, absolute paths and symbolic links are resolved before
the check, so none of them leaves the folder), and kept off the protected
paths by the same check as theirs (``ProtectionGuard``: by real path, and by
inode, so that a hard link in a skill's folder to an env file is refused).

A skill's files come from a :class:`SkillFiles`: :class:`FolderFiles` for a
skill on disk; a skill that arrived over MCP brings its own (reads of its
origin server's ``skill://`` resources, checked against their digests).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, final

import anyio
import mcp.types as mcp_types

from .._exceptions import PolicyDenied, SkillNotFound
from .._skill_files import SKILL_FILE_TOOL, SkillFiles
from ..registry import Level, ToolContext, ToolResult, ToolSpec
from ._protected import ProtectedPath, within
from ._workspace import Protected, Workspace

__all__ = ["FolderFiles", "SkillFileTool"]

MAX_SKILL_FILE_BYTES = 1024 * 1024
# Folders no skill means to ship: version control and caches.
_SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules"})


@final
class FolderFiles:
    """The files of a skill on disk: its folder, with every read confined to it and kept off the protected paths.

    Every reader of a skill's files goes through one (``read_skill_file``, the
    ``skill://`` resources of ``toolsift serve``, the files a served skill names).

    Args:
        folder: The folder holding ``SKILL.md``.
        protected: What no skill's file may be (``protected_paths``), or a function
            returning it; a protected folder that holds the skill (the skills
            folder it lies in) is left out, as the skill's own files are in it.

    Raises:
        ConfigError: When ``folder`` is not an existing directory.
    """

    def __init__(self, folder: str | os.PathLike[str], *, protected: Protected = ()) -> None:
        self._given = protected if callable(protected) else tuple(protected)
        self._folder = Workspace(folder, protected=self._beside_the_skill)
        self.where = f"the folder {str(self._folder.root)!r}"

    def _beside_the_skill(self) -> list[ProtectedPath]:
        given = self._given() if callable(self._given) else self._given
        root = self._folder.root
        return [entry for entry in given if not (entry.folder and within(root, Path(os.path.realpath(entry.path))))]

    @property
    def root(self) -> Path:
        """The real path of the skill's folder."""
        return self._folder.root

    def __repr__(self) -> str:
        return f"FolderFiles({str(self._folder.root)!r})"

    @classmethod
    def of(cls, skill: Any, *, protected: Protected = ()) -> FolderFiles | None:
        """The files of a skill loaded from a SKILL.md on disk; None for one built in code or from a prompt."""
        path = getattr(skill, "path", None)
        if not isinstance(path, Path) or not path.parent.is_dir():
            return None
        return cls(path.parent, protected=protected)

    def names(self) -> list[str]:
        """Every regular file under the folder whose real path stays inside it and is not protected, sorted.

        Links are not followed into folders; a link to a file counts only when it
        points inside the skill. Version-control and cache folders are skipped.
        """
        root = self._folder.root
        guard = self._folder.guard()
        found: list[str] = []
        for current, folders, files in os.walk(root):
            folders[:] = sorted(name for name in folders if name not in _SKIPPED_FOLDERS)
            for name in files:
                path = Path(current, name)
                real = Path(os.path.realpath(path))
                if within(real, root) and real.is_file() and guard.covering(real) is None:
                    found.append(path.relative_to(root).as_posix())
        return sorted(found)

    def resolve(self, path: object) -> Path:
        """The real path of the skill's file ``path``.

        Raises:
            PolicyDenied: When ``path`` is not a non-empty string, resolves outside
                the folder, or is a protected file (by path, or by inode: a hard link to one).
        """
        real = self._confined(path)
        self._folder.guard().refuse(
            real,
            f"the skill's file {path!r}",
            policy="skill-folder",
            tool=SKILL_FILE_TOOL,
            rule="a skill's files never include what configures toolsift",
        )
        return real

    def _confined(self, path: object) -> Path:
        try:
            return self._folder.confine(path, tool=SKILL_FILE_TOOL)
        except PolicyDenied as exc:
            if not isinstance(path, str) or not path or "\0" in path:
                raise  # not a path at all: the workspace's words fit
            # The workspace's own wording speaks of "builtin tools" and "the workspace".
            raise PolicyDenied(
                "skill-folder",
                f"the path {path!r} leaves the skill's folder {str(self.root)!r}; "
                f"{SKILL_FILE_TOOL} reads only the files of the active skill",
                tool=SKILL_FILE_TOOL,
            ) from exc

    async def read(self, path: str) -> bytes:
        """The bytes of ``path``, at most 1 MiB (see :class:`SkillFiles`)."""
        real = self.resolve(path)
        data = await anyio.Path(real).read_bytes()
        if len(data) > MAX_SKILL_FILE_BYTES:
            raise OSError(f"{path!r} is larger than the limit of {MAX_SKILL_FILE_BYTES:,} bytes")
        return data


#: Given a skill, its files (None when it has none to offer).
FilesFor = Callable[[Any], SkillFiles | None]


@final
class SkillFileTool:
    """``read_skill_file(path)``: read one file of the active skill.

    The skill is the one the call's turn scope names (``TurnScope.skill``); a
    call without an active skill, or for a skill with no files, is an error
    result. Register it internal: a conversation pins it (see
    ``TurnScope.pinned``) only while a skill with bundled files is active.

    Args:
        lookup: Finds a skill by name as its source holds it now (``SkillsLoader.get``).
        files_for: The files of a skill (``FolderFiles.of`` with the protected paths, for skills on disk).
    """

    def __init__(self, lookup: Callable[[str], Any], files_for: FilesFor) -> None:
        self._lookup = lookup
        self._files_for = files_for
        reading = mcp_types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
        self._spec = ToolSpec(
            name=SKILL_FILE_TOOL,
            description=(
                "Read a file bundled with the active skill (reference documents, scripts, templates), "
                "by its path relative to the skill's folder, such as 'reference/guide.md'."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "The file's path relative to the skill's root"}
                },
                "required": ["path"],
                "additionalProperties": False,
            },
            title="Read a skill's file",
            annotations=reading,
            required_level=Level.READ,
            read_only=True,
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool's static description."""
        return self._spec

    def __repr__(self) -> str:
        return "SkillFileTool()"

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Read ``args['path']`` from the active skill's files.

        Raises:
            PolicyDenied: The path leaves the skill.
        """
        path = args["path"]
        name = ctx.scope.skill if ctx.scope is not None else None
        if name is None:
            return ToolResult.error(f"{SKILL_FILE_TOOL}: no skill is active; it reads the active skill's files")
        try:
            files = self._files_for(self._lookup(name))
        except SkillNotFound:
            files = None
        if files is None:
            return ToolResult.error(f"{SKILL_FILE_TOOL}: skill {name!r} has no files of its own to read")
        try:
            data = await files.read(path)
        except FileNotFoundError:
            listing = ", ".join(n for n in files.names() if n != "SKILL.md") or "none besides SKILL.md"
            return ToolResult.error(f"{SKILL_FILE_TOOL}: skill {name!r} has no file {path!r}; its files: {listing}")
        except OSError as exc:
            return ToolResult.error(f"{SKILL_FILE_TOOL}: {path!r} of skill {name!r} could not be read: {exc}")
        try:
            return ToolResult.text(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            return ToolResult.error(
                f"{SKILL_FILE_TOOL}: {path!r} of skill {name!r} is not UTF-8 text (invalid byte at offset {exc.start})"
            )
