"""A skill's own files, as every room sees them: where a skill lives, what it bundles, how they are named.

Published skills point at files beside their ``SKILL.md`` (``reference/*.md``,
``scripts/*.py``). A :class:`SkillFiles` is one skill's files wherever they
live: ``builtins.FolderFiles`` for a skill on disk (reads confined to its
folder), ``search.McpServedSkill.files`` for one that arrived over MCP (reads of
its origin server's resources, checked against their digests). A shared root
module: the builtins, the server, the search package and the agent loop all use it.
"""

from __future__ import annotations

import hashlib
from typing import Protocol, runtime_checkable

__all__ = ["SKILLS_EXTENSION", "SKILL_FILE_TOOL", "SkillFiles", "sha256_digest", "skill_files_note"]

#: The MCP Skills extension (SEP-2640 draft), as servers declare it in their capabilities.
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
#: The tool that reads the active skill's files; a conversation pins it while a skill with bundled files is active.
SKILL_FILE_TOOL = "read_skill_file"


def sha256_digest(data: bytes) -> str:
    """The digest of ``data`` as the MCP Skills extension writes it: ``sha256:<64 lowercase hex>``."""
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


@runtime_checkable
class SkillFiles(Protocol):
    """The files of one skill, wherever they live.

    Attributes:
        where: Where the skill lives, for the model (a folder, or a server and URI).
    """

    where: str

    def names(self) -> list[str]:
        """Every file of the skill (``SKILL.md`` included), as POSIX paths relative to its root, sorted."""
        ...

    async def read(self, path: str) -> bytes:
        """The bytes of the skill's file ``path`` (relative to the skill's root).

        Raises:
            PolicyDenied: ``path`` leaves the skill (``..``, an absolute path elsewhere, a link out).
            FileNotFoundError: The skill has no such file.
            OSError: It could not be read.
        """
        ...


def skill_files_note(files: SkillFiles) -> str:
    """The note a skill's body is given when it bundles files: where it lives, what it holds, how to read it.

    Empty when the skill is its ``SKILL.md`` alone.
    """
    bundled = [name for name in files.names() if name != "SKILL.md"]
    if not bundled:
        return ""
    listing = "\n".join(f"- {name}" for name in bundled)
    return (
        f"This skill lives in {files.where} (its paths are relative to that root). "
        f"Its bundled files:\n{listing}\n"
        f"Read one with the {SKILL_FILE_TOOL} tool (path relative to the skill's root); "
        "it reaches this skill's files and nothing else."
    )
