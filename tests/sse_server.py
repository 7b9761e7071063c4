"""The ``general`` example server over the legacy HTTP+SSE transport, for the session's ``type: sse``.

Started by ``servers.http_server("../../tests/sse_server.py")``: it takes the
same ``--http --port --ready-file`` flags as the examples and announces the URL
the same way (that URL ends in ``/mcp``; the SSE endpoint is ``/sse``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "servers"))

from _http import add_http_arguments, serve_http
from general import mcp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_http_arguments(parser)
    args = parser.parse_args()
    serve_http(mcp.sse_app(), port=args.port, ready_file=args.ready_file)


if __name__ == "__main__":
    main()
