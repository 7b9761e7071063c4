"""Compiling and rendering skill bodies in a Jinja2 sandbox.

A SKILL.md may come from anywhere (a shared folder, a downloaded skill pack), so
its body is untrusted code. It runs in ``ImmutableSandboxedEnvironment``: no
attribute starting with ``_`` (``''.__class__``, ``f.__globals__``), no method
that mutates a list or dict, ``range`` capped. ``StrictUndefined`` turns every
unknown name into an error instead of an empty string.

Two more guards, because Jinja folds constant expressions while compiling:
``{{ 10 ** 10 ** 10 }}`` would otherwise freeze the loader at load time, before
any render. Power and repetition are intercepted and refused past a size limit.
Loops can still spend CPU at render time; the sandbox stops escapes, not every
form of waste.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from jinja2 import StrictUndefined, Template, TemplateAssertionError, UndefinedError, meta, nodes
from jinja2.exceptions import SecurityError
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .._exceptions import SkillRenderError

if TYPE_CHECKING:
    from ._model import Skill

__all__ = ["RESERVED_VARIABLE", "compile_template", "render_skill"]

#: Always defined while rendering: the raw argument text, like Claude Code's ``$ARGUMENTS``.
RESERVED_VARIABLE: Final = "arguments"

#: Largest string or sequence ``*`` may build, in items.
MAX_REPEAT: Final = 1_000_000
#: Largest integer ``**`` may build, in bits.
MAX_POWER_BITS: Final = 65_536


class _SkillEnvironment(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(left, int) and isinstance(right, int) and right > 0:
            if max(left.bit_length(), 1) * right > MAX_POWER_BITS:
                raise SecurityError(f"{left} ** {right} is larger than {MAX_POWER_BITS} bits")
        elif operator == "*":
            size, count = (left, right) if isinstance(right, int) else (right, left)
            if isinstance(size, str | list | tuple) and isinstance(count, int) and len(size) * count > MAX_REPEAT:
                raise SecurityError(f"repeating a sequence {count} times goes past {MAX_REPEAT} items")
        return super().call_binop(context, operator, left, right)


# trim_blocks/lstrip_blocks: a block tag on its own line leaves no blank line behind,
# which keeps prompts built with {% if %} readable. No autoescape: the output is markdown.
_ENVIRONMENT: Final = _SkillEnvironment(
    undefined=StrictUndefined, autoescape=False, trim_blocks=True, lstrip_blocks=True
)


def _first_use(tree: nodes.Template, name: str) -> int:
    for node in tree.find_all(nodes.Name):
        if node.name == name and node.ctx == "load":
            return node.lineno
    return 1  # pragma: no cover - find_undeclared_variables only reports names it saw loaded


@lru_cache(maxsize=1024)
def compile_template(source: str, declared: frozenset[str]) -> Template:
    """Compile a skill body in the sandbox and check its names.

    Cached by (source, declared names): the loader compiles every skill on each
    scan, and an unchanged body costs a lookup.

    Args:
        source: The body.
        declared: The skill's variable names; ``arguments`` is always available.

    Raises:
        jinja2.TemplateSyntaxError: For a syntax error, and (as its subclass
            ``TemplateAssertionError``) for a name the skill does not declare; both
            carry the template line.
    """
    tree = _ENVIRONMENT.parse(source)
    unknown = sorted(meta.find_undeclared_variables(tree) - declared - {RESERVED_VARIABLE})
    if unknown:
        name = unknown[0]
        listing = ", ".join(sorted(declared)) or "none"
        raise TemplateAssertionError(
            f"the body uses {name!r}, which is not declared under 'variables' (declared: {listing}; "
            f"{RESERVED_VARIABLE!r} is always available)",
            _first_use(tree, name),
        )
    return _ENVIRONMENT.from_string(tree)


def _names(names: Collection[str]) -> str:
    return ", ".join(repr(n) for n in names)


def render_skill(skill: Skill, variables: Mapping[str, object] | None = None) -> str:
    """Render a skill's body with the given variables.

    Variables not given take their default (optional ones without a default are
    the empty string); ``arguments`` is the empty string unless given.
    :func:`bind_arguments` builds the mapping from ``/use`` text.

    Args:
        skill: The skill.
        variables: Values by variable name (plus, optionally, ``arguments``).

    Returns:
        The rendered markdown.

    Raises:
        SkillRenderError: When a name is unknown, a required variable is missing,
            the body refers to an undefined value, the sandbox refuses an unsafe
            operation, or the template otherwise fails.
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
    missing = [spec.name for spec in declared.values() if spec.required and spec.name not in given]
    if missing:
        raise SkillRenderError(skill.name, f"missing required variable(s) {_names(missing)}", path=skill.path)
    context: dict[str, object] = {RESERVED_VARIABLE: ""}
    context.update({spec.name: spec.fallback for spec in declared.values() if not spec.required})
    context.update(given)
    try:
        return skill.template.render(context)
    except SecurityError as exc:
        raise SkillRenderError(skill.name, f"refused by the sandbox: {exc}", path=skill.path) from exc
    except UndefinedError as exc:
        raise SkillRenderError(skill.name, f"undefined value: {exc.message}", path=skill.path) from exc
    except Exception as exc:
        # Whatever the template raises (a syntax error in a skill built in code,
        # a division by zero, a bad filter argument) is the skill's fault, not the caller's.
        raise SkillRenderError(skill.name, f"{type(exc).__name__}: {exc}", path=skill.path) from exc
