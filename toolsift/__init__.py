"""toolsift: many MCP servers, one agent, only the tools that matter this turn.

The package root publishes the exception tree, which every room raises from;
every other public name has one home: ``toolsift.toolbox`` (the facade),
``toolsift.registry`` (tools, the registry, ``@tool``), ``toolsift.mcp_sessions``,
``toolsift.skills``, ``toolsift.agent`` and the other rooms. Importing the root
loads none of them (``toolsift --version`` pays for nothing else).
"""

from . import _exceptions
from ._exceptions import *  # noqa: F403  (the tree is the root's whole surface, pinned in tests/test_public_api.py)
from ._public import publish

__version__ = "0.1.0"

__all__: list[str] = []
__all__ += _exceptions.__all__

publish(globals(), __name__, __all__)
