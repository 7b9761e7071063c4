"""HAProxy in front of toolsift gateway replicas: the config they need, and a way to try it on one machine.

Round robin with no stickiness (any replica serves any session, through
Redis), health checks on ``GET /readyz``, SSE streamed as it comes, and
JSON-RPC errors instead of HTML when no replica answers:

- a replica that refuses the connection (stopped, restarting) is skipped:
  the request goes to the next one (nothing reached the dead replica, so
  nothing ran twice);
- a replica that dies after it received a request and before it answered
  gives that request a 502 whose body is a JSON-RPC error, which the MCP
  client hands to the caller; the client's session goes on on another
  replica. (A replica dying during an SSE stream breaks the stream; the
  client resumes it with ``Last-Event-ID``.)

Try it on one machine (Debian package ``haproxy``):

    python examples/balancer/haproxy.py --port 8700 127.0.0.1:8701 127.0.0.1:8702 127.0.0.1:8703

or print the config to adapt it (addresses, TLS, timeouts) for production:

    python examples/balancer/haproxy.py --print --port 8700 10.0.0.1:8765 10.0.0.2:8765 > haproxy.cfg
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["haproxy_config"]

# The JSON-RPC error HAProxy answers with, by status, so MCP clients see why (id null: the request's is unknown).
_ERRORS = {
    502: "the gateway replica serving this request stopped before it answered; the request may or may not "
    "have been carried out",
    503: "no gateway replica is available",
    504: "the gateway replica serving this request did not answer in time; the request may or may not have "
    "been carried out",
}


def _error_line(status: int, message: str) -> str:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": message}})
    return f"    http-error status {status} content-type application/json string '{body}'"


def haproxy_config(
    upstreams: Sequence[str],
    *,
    port: int,
    host: str = "127.0.0.1",
    admin_socket: Path | None = None,
    health_path: str = "/readyz",
) -> str:
    """A ``haproxy.cfg`` spreading requests over ``upstreams`` (``host:port`` each; servers ``r0``, ``r1``...).

    Args:
        upstreams: The replicas' addresses.
        port: The port clients connect to.
        host: The address to bind.
        admin_socket: Where HAProxy's runtime API listens (``disable server``,
            ``show stat``...); None: no runtime API.
        health_path: What the health check asks each replica (its readiness probe).
    """
    admin = f"    stats socket {admin_socket} level admin\n" if admin_socket is not None else ""
    servers = "".join(f"    server r{index} {address} check\n" for index, address in enumerate(upstreams))
    errors = "\n".join(_error_line(status, message) for status, message in _ERRORS.items())
    return f"""\
global
{admin}
defaults
    mode http
    # SSE streams stay open between events (the gateway pings every 15 s): timeouts are long.
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    timeout http-request 30s
    timeout http-keep-alive 30s
    # A refused connection is retried on another replica; a request a replica received is never sent twice.
    retries 3
    retry-on conn-failure
    option redispatch 1

frontend gateway
    bind {host}:{port}
    default_backend replicas

backend replicas
    balance roundrobin
    http-reuse safe
    # A replica bound to loopback (trying on one machine) answers only requests that name a loopback host.
    option httpchk
    http-check send meth GET uri {health_path} ver HTTP/1.1 hdr Host localhost
    http-check expect status 200
    # Checked every second: one failed check takes a replica out, one passed check puts it back. A replica
    # that refuses the check is out at once; one that is only slow to answer (a loaded machine) has 10 s.
    timeout check 10s
    default-server inter 1s fall 1 rise 1
{errors}
{servers}"""


def _run(arguments: argparse.Namespace) -> None:
    program = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")  # Debian's root-only PATH
    if program is None:
        sys.exit("haproxy is not installed (Debian package haproxy)")
    with tempfile.TemporaryDirectory(prefix="toolsift-haproxy-") as folder:
        path = Path(folder) / "haproxy.cfg"
        path.write_text(haproxy_config(arguments.upstreams, port=arguments.port, host=arguments.host), encoding="utf-8")
        print(f"haproxy on http://{arguments.host}:{arguments.port}/mcp (config {path})", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            subprocess.run([program, "-f", str(path), "-db"], check=False)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8700)
    parser.add_argument("--print", action="store_true", help="print the config instead of running HAProxy")
    parser.add_argument("upstreams", nargs="+", help="host:port of each replica")
    parsed = parser.parse_args()
    if parsed.print:
        print(haproxy_config(parsed.upstreams, port=parsed.port, host=parsed.host), end="")
    else:
        _run(parsed)
