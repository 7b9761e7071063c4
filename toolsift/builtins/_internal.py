"""What other toolsift packages use of the built-in tools and users do not.

Not public: a package imports from another either its public names or the names listed here, and
``tests/test_architecture.py`` checks both and pins this list.
"""

from ._protected import FollowedProtection as FollowedProtection
from ._skill_files import FolderFiles as FolderFiles
from ._skill_files import SkillFileTool as SkillFileTool
from ._tools import builtin_tool_names as builtin_tool_names

__all__ = [
    "FolderFiles",
    "FollowedProtection",
    "SkillFileTool",
    "builtin_tool_names",
]
