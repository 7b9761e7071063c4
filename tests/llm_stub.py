"""A loopback HTTP server that answers LLM API requests with recorded replies."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).parent / "recorded"


@dataclass
class Stub:
    """Replies are served in order; every request body is kept."""

    url: str
    replies: list[tuple[int, Any]]
    requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


def recorded(name: str) -> Any:
    return json.loads((RECORDED / name).read_text())


@contextmanager
def llm_stub(*replies: tuple[int, Any]) -> Iterator[Stub]:
    stub = Stub(url="", replies=list(replies))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            stub.requests.append(json.loads(self.rfile.read(length) or b"{}"))
            stub.paths.append(self.path)
            status, body = stub.replies.pop(0) if stub.replies else (500, {"error": {"message": "no reply left"}})
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    stub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
