"""The size limit on Streamable HTTP answers, applied to the response body as it arrives.

The SDK reads a JSON answer whole (``response.aread()``) and gives an SSE
event over its ``max_sse_event_size`` the same error code as a dropped
connection, which the session would take for a crash. So toolsift's own
``httpx2`` client gets a response hook that wraps the body of every POST that
carries a JSON-RPC request: a JSON body, or an SSE event, that grows past the
limit is dropped as it arrives and replaced by the "too large" error of
``_substitutes`` for that request, which the SDK then parses like any answer. Sizes are counted on
the wire; the client asks for uncompressed bodies, so that is the size of the
text too.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx2
import mcp.types as types

from ._substitutes import too_large_error

__all__ = ["limit_responses", "request_id_of"]

# An SSE event ends with an empty line; each line ends with CRLF, LF or CR. The atomic groups keep a
# lone CRLF from counting as two line ends.
_EVENT_END = re.compile(rb"(?>\r\n|\r|\n)(?>\r\n|\r|\n)")
_MAX_END = 4  # bytes of the longest event end, kept across chunks while an event is being dropped


def limit_responses(limit: int) -> Callable[[httpx2.Response], Awaitable[None]]:
    """An ``httpx2`` response hook that bounds the answer to each JSON-RPC request at ``limit`` bytes."""

    async def hook(response: httpx2.Response) -> None:
        if response.request.method != "POST" or response.status_code != 200:
            return
        request_id = request_id_of(response.request)
        if request_id is None:
            return
        kind = response.headers.get("content-type", "").lower()
        if kind.startswith("application/json"):
            declared = response.headers.get("content-length", "")
            response.stream = _LimitedJson(
                response.stream, limit, request_id, int(declared) if declared.isdigit() else None
            )
        elif kind.startswith("text/event-stream"):
            response.stream = _LimitedEvents(response.stream, limit, request_id)

    return hook


def request_id_of(request: httpx2.Request) -> types.RequestId | None:
    try:
        message: Any = json.loads(request.content)
    except (httpx2.RequestNotRead, ValueError):
        return None
    if isinstance(message, dict) and "method" in message and isinstance(message.get("id"), int | str):
        return message["id"]  # type: ignore[no-any-return]
    return None


def _error_json(request_id: types.RequestId, size: int, limit: int) -> bytes:
    return too_large_error(request_id, size, limit).model_dump_json(by_alias=True, exclude_unset=True).encode()


class _LimitedJson(httpx2.AsyncByteStream):
    """A JSON body kept up to the limit; past it, the body is the "too large" error instead."""

    def __init__(self, inner: Any, limit: int, request_id: types.RequestId, declared: int | None) -> None:
        self._inner, self._limit, self._id, self._declared = inner, limit, request_id, declared

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._declared is not None and self._declared > self._limit:
            # Known too large before the first byte: not downloaded at all.
            yield _error_json(self._id, self._declared, self._limit)
            return
        parts: list[bytes] = []
        size = 0
        async for chunk in self._inner:
            size += len(chunk)
            if size <= self._limit:
                parts.append(chunk)
            else:
                parts.clear()
        if size > self._limit:
            yield _error_json(self._id, size, self._limit)
            return
        for part in parts:
            yield part

    async def aclose(self) -> None:
        await self._inner.aclose()


class _LimitedEvents(httpx2.AsyncByteStream):
    """An SSE body passed on event by event; an event past the limit becomes the "too large" error."""

    def __init__(self, inner: Any, limit: int, request_id: types.RequestId) -> None:
        self._inner, self._limit, self._id = inner, limit, request_id

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pending = bytearray()  # the event being received
        dropped = 0  # bytes of an oversized event dropped so far; 0 while none is
        async for chunk in self._inner:
            resume = 0  # where an event end may start: earlier bytes were searched already
            if dropped:
                # Only the last bytes are kept, to find the end of the event across chunks.
                carry = bytes(pending)
                pending[:] = carry + chunk
                found = _EVENT_END.search(pending)
                if found is None or (found.end() == len(pending) and pending.endswith(b"\r")):
                    dropped += len(chunk)
                    del pending[:-_MAX_END]
                    continue
                size = dropped + found.end() - len(carry)
                del pending[: found.end()]
                dropped = 0
                yield self._error_event(size)
            else:
                resume = max(len(pending) - _MAX_END, 0)
                pending += chunk
            start = 0
            while (found := _EVENT_END.search(pending, max(start, resume))) is not None:
                end = found.end()
                if end == len(pending) and pending.endswith(b"\r"):
                    break  # the LF of a CRLF may be in the next chunk
                if end - start > self._limit:
                    yield self._error_event(end - start)
                else:
                    yield bytes(pending[start:end])
                start = end
            del pending[:start]
            if len(pending) > self._limit:
                dropped = len(pending)
                del pending[:-_MAX_END]
        if pending and not dropped:
            yield bytes(pending)

    def _error_event(self, size: int) -> bytes:
        return b"event: message\r\ndata: " + _error_json(self._id, size, self._limit) + b"\r\n\r\n"

    async def aclose(self) -> None:
        await self._inner.aclose()
