"""What a call by a name the registry does not hold is told: held back since pinned, its server away, or unknown."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from .._exceptions import ToolHeld, ToolNotFound
from .._names import namespace_of

__all__ = ["Absences"]


class Absences:
    """The namespaces known to be away (with why), and the tools held back (with their server and why)."""

    def __init__(self) -> None:
        self._away: dict[str, str] = {}
        self._held: dict[str, dict[str, tuple[str, str]]] = {}  # namespace -> {tool: (server, why held)}

    def explain(self, server: str, reason: str | None) -> None:
        """Remember why namespace ``server`` has no tools (None forgets it)."""
        if reason is None:
            self._away.pop(server, None)
        else:
            self._away[server] = reason

    def hold_back(self, server: str, held: Mapping[str, tuple[str, str]]) -> None:
        """Remember which tools of ``server`` are held back and why, in place of what was said before."""
        if held:
            self._held[server] = dict(held)
        else:
            self._held.pop(server, None)

    def error(self, name: str, namespaces: Collection[str | None], known: Collection[str]) -> ToolHeld | ToolNotFound:
        """The error for a call of ``name``, given the namespaces that have tools and every known name."""
        namespace = namespace_of(name)
        held = self._held.get(namespace or "", {}).get(name)
        if held is not None:
            return ToolHeld(name, *held)
        hint = None
        if namespace is not None and namespace not in namespaces:
            hint = self._away.get(namespace) or f"no server {namespace!r} has registered tools"
        # A server that is known to be away (draining) explains the absence; a close name would mislead.
        return ToolNotFound(name, hint=hint, known=() if namespace in self._away else known)
