"""Hot reload: apply a new config to running sessions without losing a call.

:class:`McpServerManager` is a :class:`~toolsift.mcp_sessions.McpSessionGroup`
that diffs each new config by server name and applies it: it starts
added servers, drains removed and changed ones (their calls in flight may
finish for ``drainSeconds``) and tells subscribers what happened
(:class:`ManagerEvent`); the manager also follows the config file with
watchfiles.
"""

from ..._public import publish
from ._manager import McpServerManager as McpServerManager

__all__ = ["McpServerManager"]

publish(globals(), __name__, __all__)
