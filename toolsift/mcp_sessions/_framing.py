"""Cutting a stdio server's output into JSON-RPC messages, each bounded in size as it arrives.

The stdio transport is newline-delimited JSON. A line is kept as a list of
chunks and joined once when it ends, so a line of n bytes costs O(n) (the
SDK's reader joins its whole buffer again for every chunk, which is what made
a 50 MB answer take 20 s). Past ``limit`` bytes a line's chunks are dropped as
they come; only its first and last bytes are kept, enough to find which
request it answers, and the line becomes the "too large" error of
``_substitutes`` for that request. Parsing stays the SDK's job: every kept line goes to its
``jsonrpc_message_adapter``.
"""

from __future__ import annotations

import json
import logging
import re

import mcp.types as types
from mcp.shared.message import SessionMessage

from ._substitutes import too_large_error

__all__ = ["LineFramer"]

logger = logging.getLogger("toolsift.mcp_sessions")

# Enough of an oversized line's ends to read its id: SDK servers write
# {"jsonrpc":"2.0","id":7,"result":...}, others {"result":...,"jsonrpc":"2.0","id":7}.
_ENDS = 512
_ID = rb'(-?\d+|"(?:[^"\\]|\\.)*")'
_JSONRPC = rb'(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?'
_HEAD_ID = re.compile(rb"\s*\{\s*" + _JSONRPC + rb'"id"\s*:\s*' + _ID + rb"\s*,\s*" + _JSONRPC + rb'"(?:result|error)"')
_HEAD_ANSWER = re.compile(rb"\s*\{\s*" + _JSONRPC + rb'"(?:result|error)"\s*:')
# The top-level id closes the object; a nested one would be followed by more closing braces.
_TAIL_ID = re.compile(rb'"id"\s*:\s*' + _ID + rb"\s*\}\s*$")

Frame = SessionMessage | Exception


class LineFramer:
    """Turns chunks of a server's stdout into messages (or parse errors, as the SDK hands them on).

    Args:
        server: The server name, for log records.
        limit: Largest line kept, in bytes; a longer answer becomes a "too large" error.
    """

    def __init__(self, server: str, limit: int) -> None:
        self._server = server
        self._limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        self._head = b""  # of an oversized line, once it is one
        self._tail = b""

    def feed(self, chunk: bytes) -> list[Frame]:
        """Take the next bytes; return the messages of the lines they complete."""
        frames: list[Frame] = []
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            self._add(chunk[start:end])
            frame = self._finish()
            if frame is not None:
                frames.append(frame)
            start = end + 1
        if start < len(chunk):
            self._add(chunk[start:])
        return frames

    def _add(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._size <= self._limit:
            self._parts.append(piece)
            return
        if self._parts or not self._head:
            # The line just went over: keep its ends, drop the rest from now on.
            line = b"".join(self._parts) + piece
            self._head, self._tail, self._parts = line[:_ENDS], line[-_ENDS:], []
        else:
            self._tail = (self._tail + piece[-_ENDS:])[-_ENDS:]

    def _finish(self) -> Frame | None:
        parts, size, head, tail = self._parts, self._size, self._head, self._tail
        self._parts, self._size, self._head, self._tail = [], 0, b"", b""
        if size > self._limit:
            return self._oversized(size, head, tail)
        line = b"".join(parts)
        if not line.strip():
            return None
        try:
            return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError as exc:  # pydantic's ValidationError is one
            return exc

    def _oversized(self, size: int, head: bytes, tail: bytes) -> Frame | None:
        found = _HEAD_ID.match(head)
        if found is None and _HEAD_ANSWER.match(head):
            found = _TAIL_ID.search(tail)
        if found is None:
            logger.warning(
                "MCP server %r sent a message of %d bytes, over its limit of %d bytes "
                "(maxResultBytes), that answers no request; dropped",
                self._server,
                size,
                self._limit,
            )
            return None
        request_id = json.loads(found.group(1))
        return SessionMessage(too_large_error(request_id, size, self._limit))
