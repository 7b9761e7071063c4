"""The user's approvals of the tools skills that arrived over MCP ask for, bound to those skills' content.

A skill served by an MCP server (the MCP Skills extension) may say, in its
``allowed-tools``, which tools it wants while it runs. A remote server writing
that field is asking for access on this host, so the grant is ignored until
the user approves it for that skill. The approval is remembered for the
server (by its configured name, never the name it reports) and the skill's
URI, bound to the skill's whole file set as the server listed it (every file's
URI and SHA-256 digest) and to the tools asked for: a file that changes, is
added or removed, or a different ``allowed-tools``, asks again.

Stored as ``skill-grants.json`` beside the user config, written the way the
trust store is (a version, an atomic swap, a clear error for a file it cannot read).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, final

from .._exceptions import ConfigError
from .._files import write_atomically
from .._folders import user_folder

__all__ = ["SkillGrant", "SkillGrants"]

_STORE_VERSION = 1


@final
@dataclass(frozen=True)
class SkillGrant:
    """One approved grant: the tools a served skill may use, for exactly the content that was approved.

    Attributes:
        server: The configured name of the server that serves the skill.
        uri: The skill's ``SKILL.md`` URI on that server.
        resources: Every file of the skill as approved: URI -> ``sha256:`` digest.
        allowed_tools: The ``allowed-tools`` patterns approved.
    """

    server: str
    uri: str
    resources: Mapping[str, str]
    allowed_tools: tuple[str, ...]

    def covers(self, resources: Mapping[str, str], allowed_tools: Sequence[str]) -> bool:
        """Whether this approval holds for a skill now listing ``resources`` and asking ``allowed_tools``."""
        return dict(self.resources) == dict(resources) and self.allowed_tools == tuple(allowed_tools)

    def changes(self, resources: Mapping[str, str], allowed_tools: Sequence[str]) -> list[str]:
        """What differs between this approval and a skill now listing ``resources`` and asking ``allowed_tools``.

        One line per difference (a file changed, added or removed; other tools asked for), so a person
        can see what they are asked to approve again; [] when the approval covers the skill.
        """
        lines = [
            f"{'changed' if uri in resources and uri in self.resources else 'added' if uri in resources else 'removed'}"
            f": {uri}"
            for uri in sorted({*self.resources, *resources})
            if self.resources.get(uri) != resources.get(uri)
        ]
        if self.allowed_tools != tuple(allowed_tools):
            lines.append(
                f"allowed-tools: {', '.join(self.allowed_tools) or '(none)'} -> {', '.join(allowed_tools) or '(none)'}"
            )
        return lines


@final
class SkillGrants:
    """The approved grants of skills that arrived over MCP, in one JSON file.

    Args:
        store: The file; default ``skill-grants.json`` in the user folder (``~/.config/toolsift``).
    """

    def __init__(self, store: Path | None = None) -> None:
        self.store = store if store is not None else user_folder() / "skill-grants.json"

    def __repr__(self) -> str:
        return f"SkillGrants({str(self.store)!r})"

    def _read(self) -> dict[tuple[str, str], SkillGrant]:
        try:
            data = json.loads(self.store.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the skill grants: {exc}; fix or delete the file", path=self.store) from exc
        grants = data.get("grants") if isinstance(data, dict) else None
        if not isinstance(grants, list) or data.get("version") != _STORE_VERSION:
            raise ConfigError(
                f"cannot read the skill grants: expected version {_STORE_VERSION} with a 'grants' list; "
                "fix or delete the file",
                path=self.store,
            )
        return {(grant.server, grant.uri): grant for value in grants if (grant := _parse(value)) is not None}

    def _write(self, grants: Mapping[tuple[str, str], SkillGrant]) -> None:
        records = [
            {
                "server": grant.server,
                "uri": grant.uri,
                "resources": dict(sorted(grant.resources.items())),
                "allowedTools": list(grant.allowed_tools),
            }
            for _, grant in sorted(grants.items())
        ]
        text = json.dumps({"version": _STORE_VERSION, "grants": records}, indent=2) + "\n"
        try:
            self.store.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(self.store, text, what="the skill grants store")
        except OSError as exc:
            raise ConfigError(f"cannot save the skill grants: {exc}", path=self.store) from exc

    def approved(self, server: str, uri: str, resources: Mapping[str, str], allowed_tools: Sequence[str]) -> bool:
        """Whether the user approved ``allowed_tools`` for the skill at ``uri`` of ``server`` with these files.

        Raises:
            ConfigError: The store cannot be read.
        """
        grant = self.grant(server, uri)
        return grant is not None and grant.covers(resources, allowed_tools)

    def stamp(self) -> tuple[int, int, int] | None:
        """What changes whenever the store is written (its inode, size and time); None while there is none.

        Cheap enough to ask often: a running host re-reads approvals when it changes (an approval given in
        another terminal applies at once).
        """
        try:
            found = self.store.stat()
        except OSError:
            return None
        return (found.st_ino, found.st_size, found.st_mtime_ns)

    def recorded(self) -> list[SkillGrant]:
        """Every approval in the store, by server and URI.

        Raises:
            ConfigError: The store cannot be read.
        """
        return [grant for _, grant in sorted(self._read().items())]

    def grant(self, server: str, uri: str) -> SkillGrant | None:
        """The approval recorded for the skill at ``uri`` of ``server``, whatever content it was bound to.

        Raises:
            ConfigError: The store cannot be read.
        """
        return self._read().get((server, uri))

    def approve(self, server: str, uri: str, resources: Mapping[str, str], allowed_tools: Sequence[str]) -> None:
        """Remember the approval of ``allowed_tools`` for that skill, bound to ``resources`` (replacing an older one).

        Raises:
            ConfigError: The store cannot be read or written.
        """
        grants = self._read()
        grants[(server, uri)] = SkillGrant(server, uri, dict(resources), tuple(allowed_tools))
        self._write(grants)

    def revoke(self, server: str, uri: str) -> bool:
        """Forget the approval for that skill; False when there was none.

        Raises:
            ConfigError: The store cannot be read or written.
        """
        grants = self._read()
        if grants.pop((server, uri), None) is None:
            return False
        self._write(grants)
        return True


def _parse(value: Any) -> SkillGrant | None:
    """A record of the store, or None for one this version cannot read (its skill is asked about again)."""
    if not isinstance(value, dict):
        return None
    server, uri, resources, tools = (value.get(key) for key in ("server", "uri", "resources", "allowedTools"))
    if not (isinstance(server, str) and isinstance(uri, str) and isinstance(resources, dict)):
        return None
    if not isinstance(tools, list) or not all(isinstance(tool, str) for tool in tools):
        return None
    digests = {key: digest for key, digest in resources.items() if isinstance(digest, str)}
    return SkillGrant(server, uri, digests, tuple(tools))
