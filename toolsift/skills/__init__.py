"""Skills: SKILL.md files that give the model instructions and pick its tools.

A skill is a folder holding a ``SKILL.md``: YAML front matter between ``---``
lines, then a markdown body. A skill that declares ``variables`` (or says
``templating: jinja``) has a Jinja2 template for a body; any other body is used
as written::

    ---
    name: release-notes
    description: Write release notes for a version, for a given audience.
    allowed-tools: read_file, list_directory, general__*
    variables:
      version: {description: The version being released}
      audience: {description: Who reads the notes, default: users}
    ---
    Write the release notes for {{ version }}, for {{ audience }}.

This package parses and validates SKILL.md files (:func:`parse_skill`), binds
``/use`` argument text to variables (:func:`bind_arguments`), renders bodies
(:meth:`Skill.render`; templates in a Jinja2 sandbox inside worker processes
with a time, output and memory budget, :class:`TemplateSandbox`), and discovers
skills in the project, user and extra folders, watching them for edits
(:class:`SkillsLoader`).

A skill does not decide which tools the model sees. It exposes its patterns,
``Skill.allowed_tools`` and ``Skill.disallowed_tools``, and the registry's
``TurnScope(skill_allowed=..., skill_disallowed=..., skill=name)`` applies them.
Unlike Claude Code, where ``allowed-tools`` only pre-approves tools, here it
RESTRICTS the turn to the tools it names (and surfaces the tools of an internal
server it names literally, such as ``claude-flow__memory_*``). Skills written
for Claude Code load as they are: ``mcp__S__t`` names are read as ``S__t``, and
what toolsift cannot use (``Bash(git add:*)``, a display name, a description
over the Agent Skills limit) is kept and reported in ``Skill.warnings``.
"""

from .._folders import default_user_dirs as default_user_dirs
from .._public import publish
from ._arguments import bind_arguments as bind_arguments
from ._loader import SkillsLoader as SkillsLoader
from ._model import Skill as Skill
from ._parse import parse_skill as parse_skill
from ._sandbox import TemplateSandbox as TemplateSandbox
from ._skillset import SkillSet as SkillSet
from ._skillset import SkillsReloaded as SkillsReloaded

__all__ = [
    "Skill",
    "SkillSet",
    "SkillsLoader",
    "SkillsReloaded",
    "TemplateSandbox",
    "bind_arguments",
    "default_user_dirs",
    "parse_skill",
]

publish(globals(), __name__, __all__)
