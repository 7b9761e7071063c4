"""What other toolsift packages use of the search package and users do not.

Not public: a package imports from another either its public names or the names listed here, and
``tests/test_architecture.py`` checks both and pins this list.
"""

from ._index import BackendName as BackendName
from ._index import server_descriptions as server_descriptions
from ._mcp_skills import McpServedSkill as McpServedSkill
from ._ranking import format_ranking as format_ranking
from ._served_skills import ServedSkills as ServedSkills

__all__ = [
    "BackendName",
    "McpServedSkill",
    "ServedSkills",
    "format_ranking",
    "server_descriptions",
]
