"""A stdio server's stderr: read through a pipe, kept in a bounded buffer, logged, secrets masked.

The SDK's ``stdio_client`` hands the child whatever file it gets as ``errlog``
(by default our own stderr, where a chatty server would flood the terminal and
be lost). Giving it the write end of a pipe lets the session read the lines,
log them under the server's name, and quote the last ones when the server
fails to start or crashes, which is usually where the reason is.
"""

from __future__ import annotations

import codecs
import logging
import os
from collections import deque
from collections.abc import Callable
from typing import TextIO

import anyio

__all__ = ["StderrBuffer", "StderrPipe"]

logger = logging.getLogger("toolsift.mcp_sessions.stderr")

_MAX_LINE_CHARS = 2000
_READ_CHUNK = 65536


class StderrBuffer:
    """The last lines a server wrote on stderr, across restarts.

    Args:
        server: The server name, for log records.
        max_lines: How many lines are kept.
        redact: Masks secrets in a line before it is stored or logged.
    """

    def __init__(self, server: str, max_lines: int, redact: Callable[[str], str]) -> None:
        self._server = server
        self._lines: deque[str] = deque(maxlen=max(max_lines, 1))
        self._redact = redact

    def add(self, line: str) -> None:
        """Store and log one line (trailing whitespace dropped, long lines cut)."""
        line = line.rstrip()
        if len(line) > _MAX_LINE_CHARS:
            line = line[:_MAX_LINE_CHARS] + f"... [{len(line)} chars]"
        line = self._redact(line)
        self._lines.append(line)
        logger.debug("[%s] %s", self._server, line)

    def tail(self, lines: int = 10) -> list[str]:
        """The last ``lines`` lines, oldest first."""
        if lines <= 0:
            return []
        return list(self._lines)[-lines:]

    def log_with_tail(self, level: int, message: str, logger: logging.Logger) -> None:
        """Log ``message`` followed by the last few stderr lines, where the reason often is."""
        tail = self.tail(5)
        if tail:
            message += "\n  last stderr lines:\n    " + "\n    ".join(tail)
        logger.log(level, "%s", message)

    def open_pipe(self) -> StderrPipe:
        """A new pipe for one child process, feeding this buffer."""
        return StderrPipe(self)


class StderrPipe:
    """One child's stderr pipe: the write end goes to the child, :meth:`pump` reads the other.

    The parent must drop its copy of the write end once the child exists
    (:meth:`close_writer`); otherwise the reader never sees end-of-file.
    """

    def __init__(self, buffer: StderrBuffer) -> None:
        self._buffer = buffer
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        self._read_fd: int | None = read_fd
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8")
        self.done = anyio.Event()

    def close_writer(self) -> None:
        """Drop the parent's copy of the write end (idempotent)."""
        if not self.writer.closed:
            self.writer.close()

    async def pump(self) -> None:
        """Read lines until the child (and everything it spawned) closes stderr.

        Cancelling it is the way to stop early; the read end is closed either way.
        """
        assert self._read_fd is not None, "a pipe is pumped once"
        fd = self._read_fd
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        partial = ""
        try:
            while True:
                await anyio.wait_readable(fd)
                try:
                    chunk = os.read(fd, _READ_CHUNK)
                except BlockingIOError:
                    continue
                if not chunk:
                    break
                partial += decoder.decode(chunk)
                *lines, partial = partial.split("\n")
                for line in lines:
                    self._buffer.add(line)
                if len(partial) > _READ_CHUNK:
                    # A server writing without newlines must not grow this without bound.
                    self._buffer.add(partial)
                    partial = ""
            partial += decoder.decode(b"", final=True)
            if partial.strip():
                self._buffer.add(partial)
        finally:
            self._read_fd = None
            anyio.notify_closing(fd)
            os.close(fd)
            self.close_writer()
            self.done.set()
