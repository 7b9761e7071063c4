"""``ConfigDiff``: what a new config changes about the servers, by server name.

A server is matched by its key under ``mcpServers`` and nothing else, so a
renamed server is one removal plus one addition. "Changed" means any setting
differs (equality of a ``StdioServer`` or ``HttpServer`` compares the type, every
field, the name and the config folder, so a server that moves from ``command``
to ``url`` is changed); there is no notion of a change small enough to apply to a
live session, because sessions are never modified, only replaced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import final

from ...config import ServerConfig

__all__ = ["ConfigDiff", "diff_servers"]


@final
@dataclass(frozen=True)
class ConfigDiff:
    """The servers a new config adds, removes, changes and leaves alone (names, sorted).

    It is falsy when the new config changes no server.

    Attributes:
        added: In the new config only: a session is started.
        removed: In the old config only: the session drains.
        changed: In both with different settings: a new session starts beside the old one.
        unchanged: In both with the same settings: the session is left alone.
    """

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def __str__(self) -> str:
        parts = [
            f"{label} {', '.join(names)}"
            for label, names in (("added", self.added), ("removed", self.removed), ("changed", self.changed))
            if names
        ]
        return "; ".join(parts) or "no server changed"


def diff_servers(old: Mapping[str, ServerConfig], new: Mapping[str, ServerConfig]) -> ConfigDiff:
    """Compare two sets of servers by name."""
    both = old.keys() & new.keys()
    return ConfigDiff(
        added=tuple(sorted(new.keys() - old.keys())),
        removed=tuple(sorted(old.keys() - new.keys())),
        changed=tuple(sorted(name for name in both if old[name] != new[name])),
        unchanged=tuple(sorted(name for name in both if old[name] == new[name])),
    )
