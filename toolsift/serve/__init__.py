"""``toolsift serve``: toolsift as an MCP server and gateway, over stdio or Streamable HTTP.

The Python API the CLI calls::

    config, settings = load_serve_config("toolsift.json")
    server = build_server(config, settings.model_copy(update={"port": 9000}))
    await serve_stdio(server)                                # one client on stdin/stdout
    url = await task_group.start(serve_http, server)         # in-process uvicorn
    app = create_http_app(server)                            # ASGI app for any server

And a runnable module (used by tests and benchmarks)::

    python -m toolsift.serve --config toolsift.json [--transport http] [--port 0]
        [--host H] [--stateless] [--json-response] [--workers N] [--profile NAME]
        [--gateway | --gateway-skill NAME] [--ready-file PATH] [--redis URL] [--replica NAME]

The ``serve`` section of ``toolsift.json`` is :class:`toolsift.config._internal.ServeSettings`.
With its ``shared`` section (a Redis URL), several such processes, on one
machine or many, serve one set of sessions behind any HTTP load balancer;
every app also answers ``/healthz`` and ``/readyz``.
"""

from .._public import publish
from ._api import build_server as build_server
from ._api import serve_stdio as serve_stdio
from ._http import create_http_app as create_http_app
from ._http import serve_http as serve_http
from ._load import load_serve_config as load_serve_config

__all__ = [
    "build_server",
    "create_http_app",
    "load_serve_config",
    "serve_http",
    "serve_stdio",
]

publish(globals(), __name__, __all__)
