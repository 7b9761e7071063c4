"""The servers of one file, entry by entry: each checked on its own, a bad one left out with why."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic.alias_generators import to_camel

from .._exceptions import InvalidToolName, SecretError
from .._names import validate_server_name
from ._dialects import Dialect, FileSettings, Places, translate_entry
from ._errors import validation_problems
from ._json_lines import Loc
from ._lint import server_warnings, transport_conflicts
from ._report import Checker, Written, located
from ._resolve import resolve_server
from ._server import SERVER_KEYS, SERVER_TYPES, ServerBase, ServerConfig, StdioServer, transport_of

__all__ = ["FileContext", "ServerEntries"]


@dataclass(frozen=True)
class FileContext:
    """What the servers of one file are read with: its dialect, its top-level settings, its folders."""

    dialect: Dialect
    settings: FileSettings
    places: Places


def _spelling(entry: Mapping[str, Any]) -> Callable[[str], str]:
    """A function from field name to the key this entry uses for it (camelCase when absent)."""

    def spell(field: str) -> str:
        written = [key for key in entry if SERVER_KEYS.get(key) == field]
        return written[0] if written else to_camel(field)

    return spell


def _kept_without_transport(key: str) -> bool:
    """Whether a key of an entry without a transport is checked: unknown keys and the settings of every server."""
    field = SERVER_KEYS.get(key)
    return field is None or field in ServerBase.model_fields


class ServerEntries:
    """The servers of one file as they are checked: the good ones, and why each other one was left out."""

    def __init__(self, prefix: Loc, check: Checker) -> None:
        self.prefix = prefix
        self.check = check
        self.good: dict[str, ServerConfig] = {}
        self.skipped: list[str] = []
        self.dropped: dict[str, str] = {}
        self.written: dict[str, Written] = {}

    def skip(self, name: str, first_problem: int) -> None:
        """Leave ``name`` out because of the problems reported from index ``first_problem`` on."""
        self.good.pop(name, None)
        self.skipped.append(name)
        self.dropped[name] = located(self.check.problems[first_problem])

    def add_all(self, servers: Mapping[str, Any], context: dict[str, Any], file: FileContext) -> None:
        namespaces: dict[str, str] = {}
        for name, entry in servers.items():
            config = self._one(name, entry, context, file)
            if config is None:
                continue
            owner = namespaces.setdefault(config.namespace, name)
            if owner != name:
                loc = (*self.prefix, name)
                before = len(self.check.problems)
                where = (*loc, _spelling(entry)("tool_prefix")) if config.tool_prefix else loc
                self.check.problem(where, f"tool namespace {config.namespace!r} is already used by server {owner!r}")
                self.skip(name, before)
                continue
            self.good[name] = config

    def _one(self, name: str, entry: Any, context: dict[str, Any], file: FileContext) -> ServerConfig | None:
        check = self.check
        loc = (*self.prefix, name)
        before = len(check.problems)
        try:
            validate_server_name(name)
        except InvalidToolName as exc:
            check.problem(loc, f"bad server name: {exc.reason}")
        if not isinstance(entry, dict):
            check.problem(loc, "expected an object of server settings")
            self.skip(name, before)
            return None
        translation = translate_entry(entry, file.dialect, file.places, disabled=file.settings.disables(name))
        written = self.written[name] = translation.written
        for where, message in translation.notes:
            check.warn((*loc, *where), message, server=name)
        kind = transport_of(translation.entry)
        if kind is None:
            self._without_transport(name, translation.entry, context, written, before)
            return None
        # The type is picked by the entry's keys; what only the other transport reads is dropped, with a warning.
        entry, ignored = transport_conflicts(translation.entry, kind)
        model = SERVER_TYPES[kind]
        try:
            validated: ServerConfig | None = model.model_validate(entry, context=context)
        except ValidationError as exc:
            check.invalid(exc, model, loc, written)
            validated = None
        if validated is None or len(check.problems) > before:
            self.skip(name, before)
            return None
        config = validated.with_name(name)
        for where, message in [*ignored, *server_warnings(config, _spelling(entry))]:
            check.warn((*loc, *written(where)), message, server=name)
        return config

    def _without_transport(
        self, name: str, entry: Mapping[str, Any], context: dict[str, Any], written: Written, before: int
    ) -> None:
        """An entry with neither ``command`` nor ``url``: a problem, so that a reload keeps what the server runs.

        An editor saving mid-edit writes such an entry; taking it as "no server"
        would stop a running one. Its unknown keys and the settings every server
        has are checked too, against a stdio server's keys, so that a misspelt
        ``command`` is reported with its close match.
        """
        loc = (*self.prefix, name)
        rest = {key: value for key, value in entry.items() if _kept_without_transport(key)}
        try:
            StdioServer.model_validate(rest, context=context)
        except ValidationError as exc:
            for where, reason in validation_problems(exc, StdioServer):
                if where != ("command",):
                    self.check.problem((*loc, *written(where)), reason)
        if len(self.check.problems) == before:
            self.check.problem(
                loc, f"server {name!r} has neither 'command' (a program to run) nor 'url' (a server to reach): set one"
            )
        self.skip(name, before)

    def check_references(self, environ: Mapping[str, str] | None) -> None:
        """Resolve every good server's references now; leave out the ones that fail."""
        for name, server in list(self.good.items()):
            try:
                resolve_server(server, environ=environ)
            except SecretError as exc:
                before = len(self.check.problems)
                self.check.problem((*self.prefix, name, *self.written[name](_field_loc(exc.field or ""))), str(exc))
                self.skip(name, before)


def _field_loc(field: str) -> Loc:
    """``env.API_KEY`` -> ``('env', 'API_KEY')``; ``args[2]`` -> ``('args', 2)``; ``url`` -> ``('url',)``."""
    head, _, key = field.partition(".")
    if key:
        return (head, key)
    name, _, index = head.partition("[")
    return (name, int(index.rstrip("]"))) if index else (name,)
