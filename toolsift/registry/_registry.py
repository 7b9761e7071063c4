"""The tool registry: two tiers of tools, atomic per-server swaps, cached schema lists."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from .._exceptions import InvalidToolName, ToolNotFound
from .._names import validate_server_name
from ._absences import Absences
from ._audit import AuditLog
from ._call import CallHandler, CallRecord
from ._execute import Executor
from ._heap import HeapSettler
from ._permissions import PermissionLayer, Permissions, ToolRule
from ._registration import Registration, RegistryChange
from ._result import ToolResult
from ._scope import TurnScope
from ._selection import SelectionIndex
from ._spec import ToolSpec
from ._tools import ProgressCallback, Tool, Unlocks
from ._visibility import Entry, hidden_reason
from .formats import SchemaFormat, get_format

__all__ = ["ToolRegistry"]

logger = logging.getLogger("toolsift.registry")
# Both are immutable, so one instance serves every call that passes none.
_NO_SCOPE = TurnScope()
_DEFAULT_PERMISSIONS = Permissions()


class ToolRegistry:
    """Holds every tool in two tiers and answers what a turn may see and call.

    *Global* tools (builtin tools, tools of ``internalOnly: false`` servers) are
    visible to every turn the agent allows. *Internal* tools (of internal
    servers) are catalogued but surface only through a skill pattern that names
    their server literally. Every mutation bumps :attr:`generation`, which keys
    the schema caches.

    Args:
        rules: Config rules that set required levels and permissions by glob;
            applied to every tool as it is registered.
        audit: Where audit events go; a fresh :class:`AuditLog` by default.
        settle_heap: Move the process's objects into the collector's
            permanent generation (``gc.freeze``) after large registrations,
            so full collections stop re-walking the catalogue. Off by default:
            it acts on the whole process, and a host's object alive at a
            freeze and later dropped in a reference cycle is never reclaimed.
            Opt in where toolsift owns the process (``toolsift serve`` does). Measured by
            ``benchmarks/bench_stall.py`` (50 servers of 200 tools registered
            one by one, on a busy 2-core machine, median of 5 runs): the
            longest event-loop stall of that start was 339 ms off (one full
            collection of 307 ms) and 41 ms on (15 ms); the later steps (skill
            switches, a list_changed, a reload, audited calls) are alike either way.
        upstream_names: Also know each MCP tool by its own server's name for
            it (``danger`` for ``srv__danger``), for tools served under those
            names (a gateway with ``prefixNames: false``): permission globs and
            config rules match them too. Off elsewhere, where a bare rule such
            as ``allowlist: ["read_file"]`` must not reach every server's ``read_file``.
    """

    def __init__(
        self,
        *,
        rules: Sequence[ToolRule] = (),
        audit: AuditLog | None = None,
        settle_heap: bool = False,
        upstream_names: bool = False,
    ) -> None:
        self.audit = audit if audit is not None else AuditLog()
        self._registration = Registration(tuple(rules), upstream_names)
        self._entries: dict[str, Entry] = {}
        self._by_namespace: dict[str | None, dict[str, Entry]] = {}
        self._alias_to_name: dict[str, str] = {}
        self._order = 0
        self._generation = 0
        self._subscribers: list[Callable[[RegistryChange], None]] = []
        self._absences = Absences()
        self._selection = SelectionIndex(self._by_namespace)
        self._executor = Executor(self._entry, self.audit)
        #: Runs one :class:`CallRecord`: :meth:`execute` as a :data:`CallHandler`, raising as it does. The
        #: innermost handler of every pipeline, so a served call and an agent-loop call take the same path.
        #: It is the executor's own method: no frame of its own on the path of every call.
        self.handle: CallHandler = self._executor.execute
        self._heap = HeapSettler() if settle_heap else None

    # -- reading -----------------------------------------------------------------

    @property
    def generation(self) -> int:
        """Increases on every change; equal generations mean identical contents."""
        return self._generation

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._entries or name in self._alias_to_name)

    def __iter__(self) -> Iterator[Tool]:
        return (entry.tool for entry in self._entries.values())

    def resolve(self, name: str) -> str:
        """Return the canonical name for a canonical name or a provider alias.

        Raises:
            ToolNotFound: When ``name`` is neither.
        """
        return self._entry(name).spec.name

    def get(self, name: str) -> Tool:
        """Return the tool registered under ``name`` or under the alias ``name``.

        Raises:
            ToolNotFound: When nothing is registered under that name or alias.
        """
        return self._entry(name).tool

    def spec(self, name: str) -> ToolSpec:
        """The spec the registry checks calls of ``name`` against: the tool's own, config rules applied.

        Raises:
            ToolNotFound: When nothing is registered under that name or alias.
        """
        return self._entry(name).spec

    def is_internal(self, name: str) -> bool:
        """True when the tool belongs to the internal tier."""
        return self._entry(name).internal

    def tools(self, *, internal: bool | None = None, server: str | None = None) -> list[Tool]:
        """Registered tools in registration order, optionally one tier or one namespace."""
        entries: Iterable[Entry] = (
            self._by_namespace.get(server, {}).values() if server is not None else self._entries.values()
        )
        return [e.tool for e in entries if internal is None or e.internal == internal]

    def servers(self) -> list[str]:
        """Namespaces that have at least one registered tool."""
        return [ns for ns, tools in self._by_namespace.items() if ns is not None and tools]

    def aliases(self, name: str) -> dict[str, str]:
        """Provider aliases of a tool, by name-rule key (empty when its name fits everywhere)."""
        return dict(self._entry(name).aliases)

    def names(self, name: str) -> tuple[str, ...]:
        """Every name permission rules match a tool by: canonical first, then served, prefixed, alias, upstream.

        Raises:
            ToolNotFound: When nothing is registered under that name or alias.
        """
        return self._entry(name).names

    def _entry(self, name: str) -> Entry:
        entry = self._entries.get(name)
        if entry is None:
            canonical = self._alias_to_name.get(name)
            if canonical is None:
                raise self._absences.error(name, self._by_namespace, self._entries)
            entry = self._entries[canonical]
        return entry

    def explain_absence(self, server: str, reason: str | None) -> None:
        """Say why namespace ``server`` has no tools (None forgets it).

        A call by name to one of its tools then raises ``ToolNotFound`` with
        ``reason`` as its hint while the namespace stays empty; hot reload sets
        it while a removed MCP server drains, so that a model calling a tool it
        saw a turn ago learns the server is draining, not that the tool never
        existed.
        """
        self._absences.explain(server, reason)

    def hold_back(self, server: str, held: Mapping[str, tuple[str, str]]) -> None:
        """Say which tools of namespace ``server`` are held back, and why (replacing what was said before).

        A held tool is not registered; a call by its name raises ``ToolHeld``
        with the reason instead of ``ToolNotFound``. ``held`` maps canonical
        tool names to (the server's name, why); empty forgets them.
        """
        self._absences.hold_back(server, held)

    # -- changing ------------------------------------------------------------------

    def subscribe(self, callback: Callable[[RegistryChange], None]) -> Callable[[], None]:
        """Call ``callback`` after every change; returns a function that unsubscribes."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    def add_permission_layer(self, layer: PermissionLayer) -> None:
        """Append an extra layer-5 check, run after the built-in ones.

        Raises:
            RuntimeError: Once the registry has listed or executed anything, since
                a turn already shown its schemas must keep the same rules.
        """
        self._executor.add_layer(layer)

    def register(self, tool: Tool, *, internal: bool = False) -> None:
        """Register one tool. See :meth:`register_many`."""
        self.register_many([tool], internal=internal)

    def register_many(self, tools: Iterable[Tool], *, internal: bool = False) -> None:
        """Register tools all at once, or none of them.

        Raises:
            InvalidToolName: When a name breaks the naming rules.
            DuplicateTool: When a name is taken (nothing is ever silently overwritten).
        """
        prepared = self._registration.prepare(tools, internal, (), self._entries, self._alias_to_name, self._order)
        self._commit(prepared, removed=[], server=None)

    def unregister(self, name: str) -> Tool:
        """Remove one tool by canonical name and return it.

        Raises:
            ToolNotFound: When no tool has that name.
        """
        entry = self._entries.get(name)
        if entry is None:
            raise ToolNotFound(name)
        self._commit([], removed=[entry], server=None)
        return entry.tool

    def replace_server(self, server: str, tools: Iterable[Tool], *, internal: bool) -> RegistryChange:
        """Swap every tool of namespace ``server`` for ``tools`` in one step.

        Readers see the old set or the new set, never a mix; if any new tool is
        invalid, nothing changes. An empty ``tools`` removes the server's tools.

        Raises:
            InvalidToolName: When ``server`` or a tool name is invalid, or a tool
                is outside the ``server__`` namespace.
            DuplicateTool: When two new tools share a name or one collides with
                another server's tool.
        """
        validate_server_name(server)
        old = list(self._by_namespace.get(server, {}).values())
        prepared = self._registration.prepare(tools, internal, old, self._entries, self._alias_to_name, self._order)
        for entry in prepared:
            if entry.namespace != server:
                raise InvalidToolName(entry.spec.name, f"replace_server({server!r}) takes only {server}__* tools")
        return self._commit(prepared, removed=old, server=server)

    def remove_server(self, server: str) -> RegistryChange:
        """Remove every tool of namespace ``server`` (nothing to remove is not an error)."""
        old = list(self._by_namespace.get(server, {}).values())
        return self._commit([], removed=old, server=server)

    def _commit(self, added: list[Entry], *, removed: list[Entry], server: str | None) -> RegistryChange:
        removed_names = {e.spec.name for e in removed}
        added_names = {e.spec.name for e in added}
        for entry in removed:
            del self._entries[entry.spec.name]
            self._by_namespace.get(entry.namespace, {}).pop(entry.spec.name, None)
            for alias in entry.aliases.values():
                self._alias_to_name.pop(alias, None)
        for entry in added:
            self._entries[entry.spec.name] = entry
            self._by_namespace.setdefault(entry.namespace, {})[entry.spec.name] = entry
            for alias in entry.aliases.values():
                self._alias_to_name[alias] = entry.spec.name
        if server is not None and not self._by_namespace.get(server):
            self._by_namespace.pop(server, None)
        self._order += len(added)
        self._generation += 1
        self._selection.changed(added, removed)
        change = RegistryChange(
            generation=self._generation,
            added=tuple(sorted(added_names - removed_names)),
            removed=tuple(sorted(removed_names - added_names)),
            updated=tuple(sorted(added_names & removed_names)),
            server=server,
        )
        for callback in list(self._subscribers):
            try:
                callback(change)
            except Exception:
                logger.exception("registry change subscriber %r failed", callback)
        if self._heap is not None:
            self._heap.note(len(added))
        return change

    # -- turns -------------------------------------------------------------------------

    def visible_tools(self, scope: TurnScope | None = None) -> list[Tool]:
        """The tools a turn with ``scope`` may see and call (layers 1-4), in registration order."""
        return [entry.tool for entry in self._select(scope or TurnScope())]

    def _select(self, scope: TurnScope) -> list[Entry]:
        shares, merged = self._selection.select(scope, self._entries)
        return merged if merged is not None else [e for share in shares for e in share.entries]

    def hidden_reason(self, name: str, scope: TurnScope | None = None) -> tuple[int, str] | None:
        """Why ``name`` is not visible in ``scope`` as (layer, reason), or None when visible.

        Raises:
            ToolNotFound: When the name is unknown (layer 2).
        """
        return hidden_reason(self._entry(name), scope or TurnScope())

    def exported_name(self, name: str, format: str | SchemaFormat = "mcp") -> str:
        """The name the model sees for ``name`` in ``format`` (an alias when the canonical one breaks its rule)."""
        entry = self._entry(name)
        rule = get_format(format).name_rule
        return entry.aliases.get(rule.key, entry.spec.name) if rule is not None else entry.spec.name

    def schemas_for_tools(
        self,
        scope: TurnScope | None = None,
        format: str | SchemaFormat = "mcp",
        *,
        strict: bool = False,
    ) -> list[dict[str, Any]]:
        """The turn's tool declarations in a provider's format.

        Global tools, plus the internal tools the scope surfaces, kept where they
        match the agent allowlist AND the skill's allowed-tools (DESIGN layers 1-4).
        Names that break the provider's rule are replaced by deterministic aliases
        that :meth:`get`, :meth:`resolve` and :meth:`execute` accept.

        The result is cached per (generation, scope, format, strict); the dicts are
        shared between calls and must be treated as read-only.

        Args:
            scope: The turn's scope; the default has no agent limit and no skill.
            format: ``mcp``, ``openai``, ``openai-responses``, ``anthropic`` or ``gemini``.
            strict: OpenAI strict mode (all properties required, optional ones
                nullable, ``additionalProperties: false``).

        Raises:
            UnknownFormat: When ``format`` is not a registered format.
            ValueError: When ``strict`` is asked of a format that has no strict mode.
        """
        self._executor.freeze()
        scope = scope if scope is not None else TurnScope()
        fmt = get_format(format)
        if strict and not getattr(fmt, "strict_mode", False):
            raise ValueError(
                f"strict mode is OpenAI's; format {fmt.name!r} has none "
                "(use 'openai' or 'openai-responses', or leave strict off)"
            )
        made = self._selection.exports_made
        schemas = self._selection.schemas(scope, self._entries, fmt, strict)
        if self._heap is not None:
            self._heap.note(self._selection.exports_made - made)
        return list(schemas)

    async def execute(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        scope: TurnScope | None = None,
        permissions: Permissions | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        discovery: Unlocks | None = None,
    ) -> ToolResult:
        """Run one tool call through the five layers.

        Layers 1-4 are re-checked for ``scope`` (what the model was not shown, it
        cannot call), then layer 5 for ``permissions``, then the arguments are
        validated against the tool's inputSchema. A tool that runs and fails, or
        exceeds ``timeout``, returns a result with ``is_error=True``. Every call is
        audited. If the caller is cancelled, the tool call is cancelled too (MCP
        tools send ``notifications/cancelled``) and the cancellation propagates.

        Args:
            name: Canonical name or provider alias.
            args: The arguments (``None`` means ``{}``).
            scope: The turn scope the schemas were built for.
            permissions: The caller's permissions; ``Permissions()`` by default.
            timeout: Seconds the tool may run.
            progress: Receives the tool's progress notifications.
            discovery: The caller's unlocked tools, for ``search_tools`` (see ``CallRecord.discovery``).

        Raises:
            ToolNotFound: Unknown name (layer 2).
            PermissionDenied: Refused by a layer; ``.layer`` says which.
            InvalidArguments: Arguments fail the inputSchema.
            SessionError: The tool's MCP server is draining or unavailable.
        """
        return await self._executor.execute(
            CallRecord(
                name,
                args if args is not None else {},
                scope if scope is not None else _NO_SCOPE,
                permissions if permissions is not None else _DEFAULT_PERMISSIONS,
                timeout,
                progress,
                discovery,
            )
        )
