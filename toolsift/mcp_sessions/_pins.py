"""Pinned tool definitions: a server may not change a tool behind the user's back.

The first time a server lists a tool, its definition (see ``_pin_digest``) is
pinned: kept with its SHA-256 digest, per config file and server, in one
file per config file under ``pinned-tools/`` beside the trusted projects
(``trusted-projects.json``), so that a server's start reads and writes its own
project's pins only, however many projects the user has.
Whenever the server's tools are listed again (``tools/list_changed`` in either
protocol era, a reconnect, a restart, a hot reload's new session), each tool
is compared with its pin. A tool whose definition changed is handled as the
server's ``pinTools`` says:

- ``hold`` (the default): held back. It is not registered, so no turn, adapter
  or gateway lists it, and a call by name is refused with :class:`ToolHeld`
  naming how to accept it. The change is logged as a warning with a unified
  diff and kept in the file as ``changed`` until accepted (``toolsift trust
  --tools SERVER``, :meth:`McpSession.accept_tool_changes`).
- ``warn``: the same warning and record, but the tool stays usable.
- ``accept``: the new definition is pinned silently (logged at info level).

The tools of a server's first listing are pinned as they are, whatever the
mode. A tool that appears in a later listing is a change like any other (a
server trusted with harmless tools can add a poisoned one): held, warned of or
pinned as ``pinTools`` says, and accepted the same way. So are the server's
handshake ``instructions`` (see ``_instruction_pins``). A tool that disappears
just leaves the registry; its pin is kept, so that a tool that comes back
changed is still held.

A config that was not loaded from a file keeps its pins in memory, for the
life of its sessions.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast, final

import mcp.types as types

from .._exceptions import ConfigError
from .._files import write_atomically
from .._folders import user_folder
from ..config import ServerConfig, ToolsiftConfig
from ._instruction_pins import (
    InstructionsChange,
    accept_instructions,
    instructions_problem,
    pending,
    review_instructions,
)
from ._pin_changes import PinReview, ToolChange, tool_change, tool_pin
from ._pin_digest import tool_digest

__all__ = ["LEGACY_PIN_FILE", "PIN_FOLDER", "PinReview", "ToolChange", "ToolPins"]

logger = logging.getLogger("toolsift.mcp_sessions")

#: The pin folder's name, in :func:`~toolsift._folders.user_folder` beside ``trusted-projects.json``.
PIN_FOLDER = "pinned-tools"
#: The one file earlier versions kept every project's pins in, beside the folder: a project that has
#: no file of its own yet takes its record from there (copied to its own file), so that no pin is lost.
#: Never written.
LEGACY_PIN_FILE = "pinned-tools.json"
_STORE_VERSION = 2
_LEGACY_VERSION = 1

# Server name -> {"pinned": {tool: pin}, "changed": {tool: pin}}; a pin is {"digest": ..., "definition": {...}}.
_Servers = dict[str, dict[str, dict[str, dict[str, Any]]]]


@final
class ToolPins:
    """The pinned definitions of one config file's servers, on disk or in memory.

    Each method reads the file again, so ``toolsift trust --tools`` run
    meanwhile counts at the server's next listing. It is the project's own
    file, read and written in the step that swaps a server's tools: that keeps
    a changed tool from ever being registered unreviewed.

    Args:
        store: The pin folder (see :meth:`for_config`); None keeps pins in memory.
        project: The config file the servers come from; its absolute path names its file in ``store``.

    Attributes:
        file: This project's pin file in ``store`` (None in memory).
    """

    def __init__(self, store: Path | None, project: Path | None = None) -> None:
        self.store = store
        self._key = os.path.abspath(project) if project is not None else ""
        digest = hashlib.sha256(self._key.encode("utf-8")).hexdigest()[:32]
        self.file = store / f"{digest}.json" if store is not None else None
        # In memory: the project's pins when there is no file, or what could not be written to it.
        self._memory: _Servers | None = {} if store is None else None
        self._warned: set[tuple[str, str, str]] = set()

    @classmethod
    def for_config(cls, config: ToolsiftConfig, store: Path | None = None) -> ToolPins:
        """The pins of ``config``'s servers: in ``store`` (``pinned-tools/`` in the user folder by default).

        A config not loaded from a file keeps them in memory.
        """
        if config.path is None:
            return cls(None)
        return cls(store if store is not None else user_folder() / PIN_FOLDER, config.path)

    def __repr__(self) -> str:
        return f"ToolPins(store={str(self.store) if self.store else None!r}, project={self._key!r})"

    # -- the file -------------------------------------------------------------------------

    def _read(self) -> _Servers:
        if self._memory is not None:
            return self._memory
        assert self.file is not None
        data = self._load(self.file)
        if data is None:
            return self._legacy()
        if data.get("version") != _STORE_VERSION:
            raise self._broken(f"version {data.get('version')!r} is not one this toolsift knows ({_STORE_VERSION})")
        if data.get("project") != self._key:
            raise self._broken(f"it holds the pins of {data.get('project')!r}, not of {self._key!r}")
        servers = data.get("servers")
        self._check(servers)
        return cast(_Servers, servers)

    def _legacy(self) -> _Servers:
        """This project's record in the one file of earlier versions, if there is one (else nothing pinned)."""
        assert self.store is not None
        path = self.store.parent / LEGACY_PIN_FILE
        data = self._load(path)
        if data is None:
            return {}
        projects = data.get("projects")
        if not isinstance(projects, dict) or data.get("version") != _LEGACY_VERSION:
            raise self._broken(f"expected version {_LEGACY_VERSION} with 'projects'", path)
        # Only this file's record is checked: a broken record of another project is that project's problem.
        servers = projects.get(self._key, {})
        self._check(servers, path)
        if servers:
            with contextlib.suppress(OSError):  # moved to the project's own file; if it cannot be, read here again
                self._write(servers)
        return cast(_Servers, servers)

    def _load(self, path: Path) -> dict[str, Any] | None:
        """The JSON object in ``path``; None when there is no such file."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, NotADirectoryError):
            return None  # nothing pinned yet (a folder that cannot be one is reported when saving)
        except (OSError, ValueError) as exc:
            raise self._broken(str(exc), path) from exc
        if not isinstance(data, dict):
            raise self._broken("expected a JSON object", path)
        return data

    def _check(self, servers: Any, path: Path | None = None) -> None:
        """Refuse a record whose shape is wrong or whose digest does not match its definition."""
        if not isinstance(servers, dict):
            raise self._broken("a project's record is not an object", path)
        for server, record in servers.items():
            if not isinstance(record, dict):
                raise self._broken(f"the record of server {server!r} is not an object", path)
            problem = instructions_problem(record)
            if problem is not None:
                raise self._broken(f"server {server!r}: {problem}", path)
            for kind in ("pinned", "changed"):
                pins = record.get(kind, {})
                if not isinstance(pins, dict):
                    raise self._broken(f"{kind!r} of server {server!r} is not an object", path)
                for tool, pin in pins.items():
                    definition = pin.get("definition") if isinstance(pin, dict) else None
                    if not isinstance(definition, dict) or tool_digest(definition) != pin.get("digest"):
                        raise self._broken(
                            f"the {kind} definition of tool {tool!r} of server {server!r} does not match its digest",
                            path,
                        )

    def _broken(self, reason: str, path: Path | None = None) -> ConfigError:
        return ConfigError(
            f"cannot read the pinned tool definitions: {reason}; fix the file, or delete it to pin every "
            "tool afresh at its next listing",
            path=path or self.file,
        )

    def _write(self, servers: _Servers) -> None:
        """Save this project's ``servers``; raise OSError when the file cannot be written."""
        if self.file is None:
            return  # pins in memory only: nothing to save
        self.file.parent.mkdir(parents=True, exist_ok=True)
        # Compact JSON: the C encoder writes a 350-tool server's pins in milliseconds (indent takes the slow one).
        data = {"version": _STORE_VERSION, "project": self._key, "servers": servers}
        write_atomically(
            self.file,
            json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n",
            what="the pinned tool definitions",
        )
        self._memory = None  # written: the file is the truth again

    # -- reviewing a listing -----------------------------------------------------------------

    def review(self, server: ServerConfig, tools: Sequence[types.Tool]) -> PinReview:
        """Compare a listing of ``server``'s tools with their pins; pin new tools, record changed ones.

        A tool listed twice counts once (the first), as registering does. A
        pin file that cannot be read holds every tool back (nothing is
        written, so nothing in it is lost); one that cannot be written keeps
        this run's pins in memory, with a warning.
        """
        try:
            servers = self._read()
        except ConfigError as exc:
            logger.error("MCP server %r: its tools are held back: %s", server.name, exc)
            return PinReview(kept=(), problem=str(exc))
        first = "pinned" not in servers.get(server.name, {})  # its first listing: every tool is pinned as it is
        record = servers.setdefault(server.name, {})
        before = json.dumps(record, sort_keys=True)
        pinned, changed = record.setdefault("pinned", {}), record.setdefault("changed", {})
        kept: list[types.Tool] = []
        held: list[ToolChange] = []
        warned: list[ToolChange] = []
        seen: set[str] = set()
        for tool in tools:
            if tool.name in seen:
                continue
            seen.add(tool.name)
            now, pin = tool_pin(tool), pinned.get(tool.name)
            same = pin is not None and pin["digest"] == now["digest"]
            if same or (pin is None and first) or server.pin_tools == "accept":
                if not same and not (pin is None and first):
                    done = "added tool %r; pinned it" if pin is None else "changed tool %r; pinned the new definition"
                    logger.info(f"MCP server %r {done} (pinTools: accept)", server.name, tool.name)
                pinned[tool.name] = now
                changed.pop(tool.name, None)
                kept.append(tool)
                continue
            change = tool_change(server.name, tool.name, pin, now)
            changed[tool.name] = now
            self._warn(server, change.what, change.listed, change.diff)
            if server.pin_tools == "warn":
                kept.append(tool)
                warned.append(change)
            else:
                held.append(change)
        if not changed:
            del record["changed"]
        if json.dumps(record, sort_keys=True) != before:
            self._save(servers)
        return PinReview(tuple(kept), tuple(held), tuple(warned))

    def _warn(self, server: ServerConfig, what: str, listed: str, diff: str) -> None:
        key = (server.name, what, listed)
        if key in self._warned:
            return  # once per new definition, not at every listing
        self._warned.add(key)
        outcome = "kept usable (pinTools: warn)" if server.pin_tools == "warn" else "held back"
        logger.warning(
            "MCP server %r %s; %s until accepted with 'toolsift trust --tools %s':\n%s",
            server.name,
            what,
            outcome,
            server.name,
            diff,
        )

    def review_instructions(self, server: ServerConfig, text: str | None) -> str | None:
        """Compare ``server``'s handshake ``instructions`` with their pin (see ``_instruction_pins``); return
        why they are held back (changed under ``pinTools: hold``, or a pin file that cannot be read), or None."""
        try:
            servers = self._read()
        except ConfigError as exc:
            return str(exc)
        record = servers.setdefault(server.name, {})
        before = json.dumps(record, sort_keys=True)
        change = review_instructions(record, server, text)
        if json.dumps(record, sort_keys=True) != before:
            self._save(servers)
        if change is None:
            return None
        self._warn(server, "changed its instructions since they were pinned", change.listed, change.diff)
        return change.refusal() if server.pin_tools == "hold" else None

    def _save(self, servers: _Servers) -> None:
        try:
            self._write(servers)
        except OSError as exc:
            if self._memory is None:
                logger.warning(
                    "cannot save the pinned tool definitions to %s (%s); they hold for this run only",
                    self.file,
                    exc,
                )
            self._memory = servers

    # -- reading and accepting changes --------------------------------------------------------

    def changes(self, servers: Iterable[str] | None = None) -> list[ToolChange]:
        """The changed definitions recorded and not accepted yet, by server then tool.

        Raises:
            ConfigError: The pin file cannot be read.
        """
        records = self._read()
        names = sorted(records) if servers is None else list(servers)
        return [
            tool_change(name, tool, records[name].get("pinned", {}).get(tool), pin)
            for name in names
            if name in records
            for tool, pin in sorted(records[name].get("changed", {}).items())
        ]

    def instruction_changes(self, servers: Iterable[str] | None = None) -> list[InstructionsChange]:
        """The changed instructions recorded and not accepted yet, by server.

        Raises:
            ConfigError: The pin file cannot be read.
        """
        records = self._read()
        names = sorted(records) if servers is None else [name for name in servers if name in records]
        return [change for name in names if (change := pending(records[name], name)) is not None]

    def accept_instructions(self, server: str) -> bool:
        """Pin the recorded changed instructions of ``server``; whether there were any.

        Raises:
            ConfigError: The pin file cannot be read.
            OSError: It cannot be written.
        """
        servers = self._read()
        if not accept_instructions(servers.get(server, {})):
            return False
        self._write(servers)
        return True

    def accept(self, server: str, tools: Iterable[str] | None = None) -> tuple[str, ...]:
        """Pin the recorded changed definitions of ``server`` (all, or those of ``tools``); return the tools pinned.

        Raises:
            ConfigError: The pin file cannot be read.
            OSError: It cannot be written.
        """
        servers = self._read()
        record = servers.get(server, {})
        changed: dict[str, Any] = record.get("changed", {})
        wanted = None if tools is None else set(tools)
        chosen = [tool for tool in changed if wanted is None or tool in wanted]
        if not chosen:
            return ()
        pinned = record.setdefault("pinned", {})
        for tool in chosen:
            pinned[tool] = changed.pop(tool)
        if not changed:
            del record["changed"]
        self._write(servers)
        return tuple(chosen)

    def pinned(self, server: str) -> Mapping[str, str]:
        """The pinned digests of ``server``'s tools, by tool name.

        Raises:
            ConfigError: The pin file cannot be read.
        """
        record = self._read().get(server, {})
        return {tool: pin["digest"] for tool, pin in record.get("pinned", {}).items()}
