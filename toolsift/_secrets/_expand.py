"""``${VAR}`` and ``${VAR:-default}`` expansion in server settings.

The syntax and semantics follow Claude Code's ``.mcp.json``, so a file written
for it behaves the same here:

- ``${VAR}`` is replaced by the environment variable ``VAR``; an unset ``VAR``
  is an error (naming the reference, the server and the field, never a value).
- ``${VAR:-default}`` uses ``default`` when ``VAR`` is unset. As in Claude Code
  and unlike POSIX shells, a variable that is set to the empty string is used
  as is; the default applies only when it is unset.
- Only the braced form is recognised: ``$VAR`` stays literal, because Claude
  Code leaves it alone and shell snippets in ``args`` often hold ``$1`` or ``$@``.
- There is no escape and no nesting; ``default`` runs to the first ``}``.
- Expansion is one pass: text that came from a variable or a default is never
  scanned again, so a value holding ``${...}`` cannot pull in other variables.

Malformed references (``${``, ``${}``, ``${1X}``, ``${A B}``) are refused when the
config loads (:func:`reference_problem`), not silently kept as text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from .._exceptions import SecretError

__all__ = ["expand_variables", "has_references", "reference_problem", "rewrite_references", "written_in_full"]

# As in Claude Code, a reference's body runs to the first `}` and splits on the first `:-`.
_REFERENCE = re.compile(r"\$\{(?P<body>[^}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _split(body: str) -> tuple[str, str | None]:
    name, sep, default = body.partition(":-")
    return name, (default if sep else None)


def has_references(value: str) -> bool:
    """Return True when ``value`` holds at least one ``${...}`` reference."""
    return _REFERENCE.search(value) is not None


def written_in_full(value: str, environ: Mapping[str, str]) -> bool:
    """True when every reference in ``value`` takes the default written beside it (its variable is unset).

    The expanded text is then all in the file, so nothing secret comes in through it.
    """
    return all(
        default is not None and name not in environ
        for name, default in (_split(match.group("body")) for match in _REFERENCE.finditer(value))
    )


def rewrite_references(value: str, rewrite: Callable[[str, str | None], str | None]) -> str:
    """Replace ``${...}`` references by what ``rewrite(name, default)`` returns, in one pass.

    Other clients' files write variables in their own forms (``${env:NAME}``,
    ``${workspaceFolder}``); turning them into ``${NAME}`` or literal text at
    load time lets one expander resolve every file at connect time. ``name``
    is the text before ``:-`` (``env:NAME``), ``default`` the text after it or
    None; returning None keeps the reference as written.
    """

    def substitute(match: re.Match[str]) -> str:
        replaced = rewrite(*_split(match.group("body")))
        return match.group() if replaced is None else replaced

    return _REFERENCE.sub(substitute, value)


def reference_problem(value: str) -> str | None:
    """Return why ``value`` holds a malformed ``${...}`` reference, or None when it is fine.

    The reason names the reference, never the value around it, because the rest
    of the value may be a secret.
    """
    end = 0
    for match in _REFERENCE.finditer(value):
        name, _ = _split(match.group("body"))
        if not _NAME.fullmatch(name):
            return (
                f"the reference to {name!r} is not valid: a variable name matches "
                "[A-Za-z_][A-Za-z0-9_]* (write ${NAME} or ${NAME:-default})"
            )
        end = match.end()
    # A `${` followed by any `}` is a match, so an unclosed one can only follow the last match.
    if "${" in value[end:]:
        return "a '${' is not closed by '}'; write ${NAME} or ${NAME:-default}"
    return None


def expand_variables(
    value: str,
    environ: Mapping[str, str],
    *,
    server: str | None = None,
    field: str | None = None,
) -> str:
    """Replace every ``${VAR}`` / ``${VAR:-default}`` in ``value`` in one pass.

    Args:
        value: The configured text.
        environ: Where variables are looked up (``os.environ`` at connect time).
        server: The server the value belongs to, for error messages.
        field: The field the value belongs to (``env.API_KEY``), for error messages.

    Returns:
        The expanded text.

    Raises:
        SecretError: When a reference is malformed, or names an unset variable
            and has no default. The message names the reference, server and
            field, never a value.
    """
    problem = reference_problem(value)
    if problem is not None:
        raise SecretError("${...}", problem, server=server, field=field)

    def substitute(match: re.Match[str]) -> str:
        name, default = _split(match.group("body"))
        found = environ.get(name)
        if found is not None:
            return found
        if default is not None:
            return default
        raise SecretError(
            f"${{{name}}}",
            f"environment variable {name!r} is not set; set it or write ${{{name}:-default}}",
            server=server,
            field=field,
        )

    return _REFERENCE.sub(substitute, value)
