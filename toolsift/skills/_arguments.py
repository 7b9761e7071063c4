"""Binding ``/use <skill> [text]`` argument text to a skill's variables.

The rules, by number of declared variables:

- none: the text is only available as ``{{ arguments }}``;
- one: the whole text is its value (``/use summarize the auth module``), or the
  value of a lone ``name=value`` when the text is exactly that;
- several: the text is ``name=value`` pairs split with shell quoting rules
  (``/use release-notes version=2.1.0 audience="plugin authors"``).

In every case ``{{ arguments }}`` holds the raw text, as Claude Code's
``$ARGUMENTS`` does, so a body can quote the request verbatim.
"""

from __future__ import annotations

import shlex

from .._exceptions import SkillArgumentError
from ._model import Skill
from ._variables import RESERVED_VARIABLE

__all__ = ["bind_arguments"]


def _lone_pair(name: str, text: str) -> str | None:
    """The value of ``text`` when it is exactly one ``name=value`` token."""
    if not text.startswith(f"{name}="):
        return None
    try:
        tokens = shlex.split(text)
    except ValueError:
        return None
    if len(tokens) != 1:
        return None
    return tokens[0].partition("=")[2]


def _pairs(skill: Skill, text: str) -> dict[str, str]:
    declared = ", ".join(skill.variables)
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise SkillArgumentError(
            skill.name, f"cannot split {text!r} into name=value pairs: {exc}; usage: {skill.usage()}"
        ) from exc
    bound: dict[str, str] = {}
    for token in tokens:
        name, sep, value = token.partition("=")
        if not sep:
            raise SkillArgumentError(
                skill.name,
                f"expected name=value pairs for the variables {declared}, got {token!r} "
                f"(quote values that hold spaces); usage: {skill.usage()}",
            )
        if name not in skill.variables:
            raise SkillArgumentError(skill.name, f"unknown variable {name!r}; declared: {declared}")
        if name in bound:
            raise SkillArgumentError(skill.name, f"variable {name!r} is given twice")
        bound[name] = value
    return bound


def bind_arguments(skill: Skill, text: str = "") -> dict[str, str]:
    """Bind ``/use`` argument text to the skill's variables.

    Args:
        skill: The skill being invoked.
        text: Everything after ``/use <name>``.

    Returns:
        A value for every declared variable (defaults and empty strings filled
        in), plus ``arguments`` holding the stripped raw text; ready for
        :meth:`Skill.render`.

    Raises:
        SkillArgumentError: When a required variable is missing, a name is not
            declared or given twice, or the text does not split into pairs.
    """
    text = text.strip()
    names = list(skill.variables)
    if len(names) == 1:
        value = _lone_pair(names[0], text)
        bound = {names[0]: value if value is not None else text} if text else {}
    elif names:
        bound = _pairs(skill, text)
    else:
        bound = {}
    missing = [spec.name for spec in skill.variables.values() if spec.required and spec.name not in bound]
    if missing:
        raise SkillArgumentError(
            skill.name, f"missing required variable(s) {', '.join(map(repr, missing))}; usage: {skill.usage()}"
        )
    values = {spec.name: bound.get(spec.name, spec.fallback or "") for spec in skill.variables.values()}
    values[RESERVED_VARIABLE] = text
    return values
