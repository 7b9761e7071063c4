"""What other toolsift packages use of the skills package and users do not.

Not public: a package imports from another either its public names or the names listed here, and
``tests/test_architecture.py`` checks both and pins this list.
"""

from ._parse import parse_skill_text as parse_skill_text
from ._sandbox import shared_sandbox as shared_sandbox
from ._skillset import SkillProblem as SkillProblem
from ._variables import SkillVariable as SkillVariable

__all__ = [
    "SkillProblem",
    "SkillVariable",
    "parse_skill_text",
    "shared_sandbox",
]
