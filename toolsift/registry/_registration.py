"""Registering tools: each name checked, provider aliases derived where a name breaks a provider's rule, and
the config's rules applied, before anything in the registry changes; and what a change did."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from .._exceptions import DuplicateTool, InvalidToolName
from .._names import namespace_of, validate_tool_name
from ._known_names import tool_names
from ._permissions import ToolRule
from ._tools import Tool
from ._visibility import Entry
from .formats import FORMATS

__all__ = ["Registration", "RegistryChange"]

_NAME_RULES = {f.name_rule.key: f.name_rule for f in FORMATS.values() if f.name_rule is not None}


@dataclass(frozen=True)
class RegistryChange:
    """What one registry mutation did; delivered to change subscribers.

    Attributes:
        generation: The registry generation after the change.
        added: Canonical names that appeared.
        removed: Canonical names that disappeared.
        updated: Names kept whose tool object was replaced.
        server: The namespace swapped by ``replace_server``, if any.
    """

    generation: int
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    server: str | None = None


@dataclass(frozen=True)
class Registration:
    """How a registry builds its entries: the config's rules, and whether tools answer to their server's names."""

    rules: tuple[ToolRule, ...]
    upstream_names: bool

    def prepare(
        self,
        tools: Iterable[Tool],
        internal: bool,
        replacing: Sequence[Entry],
        entries: Mapping[str, Entry],
        alias_to_name: Mapping[str, str],
        last_order: int,
    ) -> list[Entry]:
        """Validate ``tools`` and build their entries, beside ``entries`` (less ``replacing``), touching neither.

        Raises:
            InvalidToolName: When a name breaks the naming rules.
            DuplicateTool: When a name is taken.
        """
        freed = {e.spec.name for e in replacing}
        freed_aliases = {a for e in replacing for a in e.aliases.values()}
        taken_aliases: set[str] = set()
        prepared: dict[str, Entry] = {}

        def free(alias: str, name: str) -> bool:
            # Aliases are shared across formats and never equal a canonical name, so
            # resolving one is a single dictionary lookup whatever the format.
            owner = alias_to_name.get(alias)
            return not (
                alias in entries
                or alias in freed
                or alias in prepared
                or alias in taken_aliases
                or (owner is not None and owner != name and alias not in freed_aliases)
            )

        for order, tool in enumerate(tools, start=last_order + 1):
            name = validate_tool_name(tool.spec.name)
            if name in prepared or (name in entries and name not in freed):
                raise DuplicateTool(name)
            if name in alias_to_name and name not in freed_aliases:
                raise DuplicateTool(name)
            aliases = {
                key: _unique_alias(rule.alias, name, free)
                for key, rule in _NAME_RULES.items()
                if not rule.accepts(name)
            }
            # Config rules match a tool by any of its names, aliases included, as the permission globs do.
            names = tool_names(tool.spec, aliases.values(), upstream=self.upstream_names)
            spec = tool.spec
            for rule in self.rules:
                spec = rule.apply(spec, names)
            prepared[name] = Entry(
                tool=tool,
                spec=spec,
                internal=internal,
                order=order,
                namespace=namespace_of(name),
                aliases=aliases,
                names=names,
            )
            taken_aliases.update(aliases.values())
        return list(prepared.values())


def _unique_alias(make: Callable[[str, int], str], name: str, free: Callable[[str, str], bool]) -> str:
    for salt in range(32):
        alias = make(name, salt)
        if free(alias, name):
            return alias
    raise InvalidToolName(name, "no collision-free provider alias could be derived")  # pragma: no cover
