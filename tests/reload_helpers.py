"""Shared pieces of the hot-reload tests: config files, event recording, child processes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from servers import EXAMPLES

from toolsift.mcp_sessions import McpSessionGroup
from toolsift.mcp_sessions._events import ManagerEventKind
from toolsift.mcp_sessions._internal import ManagerEvent
from toolsift.mcp_sessions.reload import McpServerManager


def example(script: str, *args: str, **fields: Any) -> dict[str, Any]:
    """A server entry of the config file for ``examples/servers/<script>``."""
    return {"command": sys.executable, "args": [str(EXAMPLES / script), *args], **fields}


def write_config(path: Path, servers: dict[str, Any], **extra: Any) -> Path:
    """Write a toolsift.json the way editors save: a temporary file renamed over the old one."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps({"tools": {"mcpServers": servers}, **extra}), encoding="utf-8")
    os.replace(temporary, path)
    return path


def write_text(path: Path, text: str) -> Path:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
    return path


class Gate:
    """Holds ``general__wait_for_file`` calls in flight until the test opens it (no durations involved)."""

    def __init__(self, folder: Path, name: str = "gate") -> None:
        self.path = folder / name

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments of a call that waits at this gate."""
        return {"path": str(self.path)}

    def open(self, text: str = "released") -> None:
        """Let every call waiting here (and every later one) answer ``text``."""
        write_text(self.path, text)


class Recorder:
    """Every event of a manager (or session group), and event-driven waits for them."""

    def __init__(self, source: McpServerManager | McpSessionGroup) -> None:
        self.events: list[ManagerEvent] = []
        self._taken: set[int] = set()
        self._arrived = anyio.Event()
        source.subscribe(self._on_event)

    def _on_event(self, event: ManagerEvent) -> None:
        self.events.append(event)
        self._arrived.set()

    def kinds(self) -> list[tuple[str, str | None]]:
        return [(e.kind, e.server) for e in self.events]

    async def next(self, kind: ManagerEventKind, server: str | None = None) -> ManagerEvent:
        """The first event of ``kind`` (for ``server``) not returned before, waiting for it if need be.

        Only the tests' hang guard limits the wait.
        """
        while True:
            for index, event in enumerate(self.events):
                if index not in self._taken and event.kind == kind and server in (None, event.server):
                    self._taken.add(index)
                    return event
            self._arrived = anyio.Event()
            await self._arrived.wait()


def child_processes() -> dict[int, str]:
    """This process's children (zombies included) by pid, with their state letter, from /proc."""
    children: dict[int, str] = {}
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # it exited while we looked
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        if int(parent) == me:
            children[int(entry)] = state
    return children
