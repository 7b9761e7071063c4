"""A round-robin HTTP proxy, to try several toolsift gateway replicas on one machine.

Each request goes to the next replica in turn, as a load balancer without
sticky sessions would send it; a replica that refuses the connection is
skipped. Use a real balancer (nginx, HAProxy, a cloud one) in production:
this one reads one request per client connection and answers with
``Connection: close``.

    python examples/balancer/round_robin.py --port 8700 127.0.0.1:8701 127.0.0.1:8702 127.0.0.1:8703

Tests drive it in-process: :meth:`RoundRobinProxy.exclude` takes a replica out
of the rotation (as a balancer does with one that failed its health check)
and :meth:`RoundRobinProxy.cut` breaks every open connection.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Sequence

__all__ = ["RoundRobinProxy"]

_HEAD_LIMIT = 64 * 1024


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return 0


def _closing(head: bytes) -> bytes:
    """The request head with ``Connection: close``: one request per upstream connection."""
    lines = [line for line in head.rstrip(b"\r\n").split(b"\r\n")
             if line.partition(b":")[0].strip().lower() not in (b"connection", b"keep-alive")]
    return b"\r\n".join([*lines, b"Connection: close"]) + b"\r\n\r\n"


class RoundRobinProxy:
    """Sends each request to the next of ``upstreams`` (``(host, port)`` pairs) that accepts it.

    Attributes:
        routed: For each upstream, how many requests it was given.
    """

    def __init__(self, upstreams: Sequence[tuple[str, int]]) -> None:
        self.upstreams = list(upstreams)
        self.routed = [0] * len(self.upstreams)
        self._turn = 0
        self._excluded: set[int] = set()
        self._open: set[asyncio.StreamWriter] = set()

    def add(self, upstream: tuple[str, int]) -> int:
        """Put another upstream in the rotation; returns its index."""
        self.upstreams.append(upstream)
        self.routed.append(0)
        return len(self.upstreams) - 1

    def exclude(self, index: int) -> None:
        """Send no more requests to upstream ``index``."""
        self._excluded.add(index)

    def include(self, index: int) -> None:
        self._excluded.discard(index)

    def cut(self) -> None:
        """Break every open connection (client and upstream sides), as a network failure would."""
        for writer in list(self._open):
            writer.transport.abort()

    def _order(self) -> list[int]:
        count = len(self.upstreams)
        start, self._turn = self._turn, (self._turn + 1) % count
        return [index for step in range(count) if (index := (start + step) % count) not in self._excluded]

    async def _pipe(self, source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while chunk := await source.read(65536):
                target.write(chunk)
                await target.drain()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one client connection: one request, proxied to the next upstream that accepts."""
        self._open.add(writer)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            request = _closing(head) + await reader.readexactly(_content_length(head))
            for index in self._order():
                try:
                    upstream_reader, upstream_writer = await asyncio.open_connection(*self.upstreams[index])
                except OSError:
                    continue
                self.routed[index] += 1
                self._open.add(upstream_writer)
                try:
                    upstream_writer.write(request)
                    await upstream_writer.drain()
                    answer = asyncio.ensure_future(self._pipe(upstream_reader, writer))
                    hangup = asyncio.ensure_future(reader.read())  # the client going away ends the exchange
                    await asyncio.wait({answer, hangup}, return_when=asyncio.FIRST_COMPLETED)
                    answer.cancel()
                    hangup.cancel()
                finally:
                    self._open.discard(upstream_writer)
                    upstream_writer.transport.abort()
                return
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass
        finally:
            self._open.discard(writer)
            writer.close()

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> asyncio.Server:
        """Listen on ``host:port`` (0: a free port; read it from the server's sockets)."""
        return await asyncio.start_server(self.handle, host, port, limit=_HEAD_LIMIT)


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host or "127.0.0.1", int(port)


async def _main(arguments: argparse.Namespace) -> None:
    proxy = RoundRobinProxy([_address(text) for text in arguments.upstreams])
    server = await proxy.start(arguments.host, arguments.port)
    print(f"round-robin proxy on http://{arguments.host}:{server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8700)
    parser.add_argument("upstreams", nargs="+", help="host:port of each replica")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main(parser.parse_args()))
