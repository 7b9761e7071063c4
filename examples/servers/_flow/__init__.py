"""The tool table of the flow example server, one module per family of groups.

``CATALOG`` lists every tool in a stable order (memory, swarm, agent, task,
coordination, workflow, session, hooks, system, neural, github, performance);
``MemoryStore`` implements the memory group for real.
"""

from ._agents import TOOLS as _AGENT_TOOLS
from ._memory import TOOLS as _MEMORY_TOOLS
from ._memory import MemoryStore as MemoryStore
from ._platform import TOOLS as _PLATFORM_TOOLS
from ._schema import ToolDef as ToolDef
from ._workflows import TOOLS as _WORKFLOW_TOOLS

CATALOG: list[ToolDef] = _MEMORY_TOOLS + _AGENT_TOOLS + _WORKFLOW_TOOLS + _PLATFORM_TOOLS

__all__ = ["CATALOG", "MemoryStore", "ToolDef"]
