"""Running ``toolsift`` commands in this process: piped stdin/stdout/stderr, and ``toolsift serve`` upstreams in memory.

A ``toolsift`` child process spends about 1.5 s of CPU importing before it
does anything; tests of what a command does (rather than of the process: its
signals, its exit from the real entry point, several processes at once) run
``toolsift.cli.main`` here instead, with the streams a pipe would give it.
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from mcp.client import Transport
from mcp.client._memory import InMemoryTransport
from mcp_helpers import reach_everywhere
from waits import CHILD_SECONDS

from toolsift.cli import main
from toolsift.mcp_sessions._transport import TransportContext

__all__ = ["Piped", "Screen", "served_in_memory"]

Step = str | Callable[[], object]


class Screen(io.TextIOBase):
    """A stream a command prints to, kept whole, that a test may wait on from another thread."""

    def __init__(self) -> None:
        super().__init__()
        self._text = ""
        self._changed = threading.Condition()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False  # piped: plain lines, no prompt, no line editing

    def write(self, text: str) -> int:
        with self._changed:
            self._text += text
            self._changed.notify_all()
        return len(text)

    @property
    def text(self) -> str:
        """All that was printed so far."""
        with self._changed:
            return self._text

    def wait_for(self, text: str, count: int = 1) -> None:
        """Wait until ``text`` was printed ``count`` times; only the child-process guard limits the wait."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._text.count(text) >= count, timeout=CHILD_SECONDS):
                raise AssertionError(f"never printed {text!r} {count} time(s); printed: {self._text}")


class _Stdin:
    """Piped input: each line in turn; a callable step runs (say, waits for output) when the command reads past it.

    ``input()`` reads it with ``readline``, finding no file descriptor to hand to line editing.
    """

    def __init__(self, steps: tuple[Step, ...]) -> None:
        self._steps = list(steps)

    def isatty(self) -> bool:
        return False

    def readline(self, size: int = -1) -> str:
        while self._steps:
            step = self._steps.pop(0)
            if isinstance(step, str):
                return step + "\n"
            step()
        return ""  # end of input


class Piped:
    """A ``toolsift`` command run in this process as a pipe would run it: ``stdin`` steps in, ``out``/``err`` out.

    Args:
        stdin: The lines typed, in order; a callable among them runs when the
            command asks for the line after it (to wait for output, or to edit a
            file between two inputs).
    """

    def __init__(self, *stdin: Step) -> None:
        self.out = Screen()
        self.err = Screen()
        self._stdin = _Stdin(stdin)

    def run(self, *argv: str) -> int:
        """Run ``toolsift ARGV``; returns its exit code. ``sys`` streams are restored afterwards."""
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sys, "stdin", self._stdin)
            patch.setattr(sys, "stdout", self.out)
            patch.setattr(sys, "stderr", self.err)
            with pytest.raises(SystemExit) as info:
                main(list(argv))
        return int(info.value.code or 0)


class _ServedInMemory:
    """``toolsift serve --config FILE`` in this process: each connection builds and enters a fresh server, as each
    start of the command is a fresh process, and reaches it over memory streams."""

    def __init__(self, config: Path) -> None:
        self._config = config

    async def open(self, stack: AsyncExitStack, context: TransportContext) -> Transport:
        from toolsift.serve import build_server

        server = build_server(self._config)  # the file's own serve settings, as the command reads them
        server.check_stdio()
        await stack.enter_async_context(server)
        return InMemoryTransport(server.sdk)


def served_in_memory(monkeypatch: pytest.MonkeyPatch, configs: dict[str, Path]) -> None:
    """Reach each named server, configured as ``toolsift serve`` of the given file, in this process.

    As :func:`mcp_helpers.in_memory_everywhere` does for example servers:
    wherever session options are built from a config (Toolbox, the CLI), the
    named servers skip their child process; others start as configured.
    """
    reach_everywhere(monkeypatch, {name: _ServedInMemory(path) for name, path in configs.items()})
