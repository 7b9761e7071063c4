"""Every name a tool is known by, so that a permission rule written with any of them matches it.

One tool answers to several names, depending on who looks:

- its canonical name: ``read_file`` (builtin), ``gh__delete_repo`` (server
  ``github`` with ``toolPrefix: gh``);
- the name ``toolsift serve`` gives a bare-named tool: ``builtin__read_file``;
- its server's config key in place of a ``toolPrefix``: ``github__delete_repo``;
- its provider aliases, where the canonical name breaks a provider's naming
  rule (what a model, and the person reading its calls, sees);
- the name its own server gives it (``delete_repo``), in a registry whose
  tools a gateway serves under those (``prefixNames: false``; the registry is
  built with ``upstream_names``). Only there: elsewhere a bare rule such as
  ``allowlist: ["read_file"]`` would start to allow every server's
  ``read_file`` too.

Rules (``denylist``, ``allowlist``, ``ask``, ``tools.permissions``) match a
tool when they match any of its names. A name one tool is known by may be
another's canonical name only when a config names a server ``builtin`` or
gives one server's key as another's ``toolPrefix``; both tools then match.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .._globs import PatternSet, compile_patterns
from .._names import SEPARATOR, SERVED_BUILTIN_NAMESPACE, namespace_of
from ._spec import ToolSpec

__all__ = ["first_matching", "matches_any", "tool_names"]


def tool_names(spec: ToolSpec, aliases: Iterable[str] = (), *, upstream: bool = False) -> tuple[str, ...]:
    """The names of the tool ``spec`` describes, canonical first, without repeats.

    Args:
        spec: The tool.
        aliases: Its provider aliases (the registry assigns them).
        upstream: Include the name its MCP server gives it (a gateway with
            ``prefixNames: false`` serves it under that name).
    """
    name = spec.name
    names = [name]
    namespace = namespace_of(name)
    if namespace is None:
        names.append(f"{SERVED_BUILTIN_NAMESPACE}{SEPARATOR}{name}")
    elif spec.remote_name is not None and spec.server is not None and spec.server != namespace:
        names.append(f"{spec.server}{SEPARATOR}{spec.remote_name}")
    names.extend(aliases)
    if upstream and spec.remote_name is not None:
        names.append(spec.remote_name)
    return tuple(dict.fromkeys(names))


def matches_any(patterns: PatternSet, names: Iterable[str]) -> bool:
    """Whether the pattern set matches at least one of ``names``."""
    return any(patterns.matches(name) for name in names)


def first_matching(globs: Sequence[str], names: Sequence[str]) -> str | None:
    """The first of ``globs`` (in the order written) that matches one of ``names``, or None."""
    return next((glob for glob in globs if matches_any(compile_patterns([glob]), names)), None)
