"""Turning a skill's body into the model's instructions.

Templating is opt-in. A skill that declares ``variables`` (or says
``templating: jinja``) has a Jinja2 body; any other skill's body is plain text,
used byte for byte, so ``${{ github.sha }}``, ``{{ .Values.image }}``,
``{{#each}}`` or ``{% raw %}`` in it mean nothing to toolsift. The ``/use``
argument text reaches a plain skill the way Claude Code passes it to a skill
without ``$ARGUMENTS``: appended after the body as an ``ARGUMENTS:`` line.

A templated body is untrusted code: it is compiled and rendered by a
:class:`~toolsift.skills.TemplateSandbox` (Jinja2's immutable sandbox, strict
undefined names, in a worker process with a time, output and memory budget).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Final, Protocol

from .._exceptions import SkillRenderError, TemplateError
from ._sandbox import TemplateSandbox, default_sandbox
from ._variables import RESERVED_VARIABLE, SkillVariable

__all__ = ["RenderedSkill", "check_template", "render_skill"]

_ARGUMENTS_LINE: Final = "ARGUMENTS: "


class RenderedSkill(Protocol):
    """What rendering reads of a skill: a :class:`~toolsift.skills.Skill` (whose model builds on this module)."""

    @property
    def name(self) -> str: ...

    @property
    def path(self) -> Path | None: ...

    @property
    def body(self) -> str: ...

    @property
    def variables(self) -> Mapping[str, SkillVariable]: ...

    @property
    def templated(self) -> bool: ...


def check_template(skill: RenderedSkill, sandbox: TemplateSandbox | None = None) -> None:
    """Compile a templated skill's body and check that it reads only declared names.

    Blocks for at most the sandbox's time budget (plus a worker's start-up).

    Raises:
        TemplateError: A syntax error or an undeclared name (with the template
            line), or a budget exceeded; the reason says how to fix it.
    """
    names = frozenset(skill.variables) | {RESERVED_VARIABLE}
    try:
        (sandbox or default_sandbox()).check(skill.body, names)
    except TemplateError as exc:
        if exc.name is None:
            raise
        listing = ", ".join(sorted(skill.variables)) or "none"
        raise TemplateError(
            f"the body uses {exc.name!r}, which is not declared under 'variables' (declared: {listing}; "
            f"{RESERVED_VARIABLE!r} is always available); if that text is meant literally, wrap it in "
            "{% raw %}...{% endraw %}",
            line=exc.line,
            name=exc.name,
        ) from None


def _names(names: Collection[str]) -> str:
    return ", ".join(repr(n) for n in names)


def _plain(body: str, arguments: object) -> str:
    text = str(arguments or "")
    return "\n\n".join(part for part in (body, f"{_ARGUMENTS_LINE}{text}" if text else "") if part)


async def render_skill(
    skill: RenderedSkill, variables: Mapping[str, object] | None = None, *, sandbox: TemplateSandbox | None = None
) -> str:
    """Render a skill's body with the given variables, without blocking other tasks.

    A plain (not templated) body comes back as written, followed by
    ``ARGUMENTS: <text>`` when ``arguments`` is given and not empty. A templated
    body renders in ``sandbox`` (the shared default when None): variables not
    given take their default (optional ones without a default are the empty
    string); ``arguments`` is the empty string unless given.
    :func:`bind_arguments` builds the mapping from ``/use`` text.

    If the caller is cancelled, it returns at once; the render itself ends
    within the sandbox's time budget.

    Args:
        skill: The skill.
        variables: Values by variable name (plus, optionally, ``arguments``).
        sandbox: Where templates run, with which limits.

    Returns:
        The instructions, markdown.

    Raises:
        SkillRenderError: When a name is unknown, a required variable is missing,
            the body refers to an undefined value, the sandbox refuses an unsafe
            operation, a budget (time, output, memory) is exceeded, or the
            template otherwise fails.
    """
    given = dict(variables or {})
    declared = skill.variables
    unknown = [n for n in given if n not in declared and n != RESERVED_VARIABLE]
    if unknown:
        raise SkillRenderError(
            skill.name,
            f"unknown variable(s) {_names(unknown)}; declared: {_names(declared) or 'none'}",
            path=skill.path,
        )
    if not skill.templated:
        return _plain(skill.body, given.get(RESERVED_VARIABLE))
    missing = [spec.name for spec in declared.values() if spec.required and spec.name not in given]
    if missing:
        raise SkillRenderError(skill.name, f"missing required variable(s) {_names(missing)}", path=skill.path)
    context: dict[str, object] = {RESERVED_VARIABLE: ""}
    context.update({spec.name: spec.fallback for spec in declared.values() if not spec.required})
    context.update(given)
    try:
        return await (sandbox or default_sandbox()).arender(skill.body, context)
    except TemplateError as exc:
        raise SkillRenderError(skill.name, exc.reason, path=skill.path) from exc
