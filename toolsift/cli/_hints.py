"""The one-line hint about internal servers that ``check``, ``servers`` and ``chat`` print.

Servers are internal unless the config says ``internalOnly: false``, so a
Claude Desktop or ``.mcp.json`` file brought as it is shows the model no tool
at all. The hint says so where the user looks, and says nothing when every
server is global.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..config import ServerConfig

__all__ = ["internal_hint"]

_SHOWN = 3


def internal_hint(servers: Iterable[ServerConfig]) -> str | None:
    """How many enabled servers are internal and how to reach their tools; None when none is."""
    enabled = [server for server in servers if server.enabled]
    internal = sorted((server for server in enabled if server.internal_only), key=lambda server: server.name)
    if not internal:
        return None
    names = ", ".join(server.name for server in internal[:_SHOWN]) + (", ..." if len(internal) > _SHOWN else "")
    return (
        f"{len(internal)} of {len(enabled)} server(s) are internal ({names}): the model sees their tools only "
        f"when a skill names the server (allowed-tools: [{internal[0].namespace}__*]) or the agent searches "
        f'for tools ("toolDiscovery": "search"); set "internalOnly": false on a server to show its tools '
        f"in every turn"
    )
