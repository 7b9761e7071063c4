"""``/healthz`` and ``/readyz``: what a load balancer or an orchestrator probes.

``/healthz`` answers 200 while the process serves HTTP at all (liveness).
``/readyz`` answers 200 once the server has started (skills loaded, gateway
sessions started) and, with shared sessions, while Redis answers; else 503,
so a balancer sends no client to a replica that could not serve it. Both
carry the replica's name when sessions are shared.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ._server import ToolsiftServer

__all__ = ["HEALTH_PATH", "READY_PATH", "health_routes"]

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"


def health_routes(server: ToolsiftServer) -> list[Route]:
    """The two probe routes of ``server``; readiness is read from ``request.app.state.ready``."""
    replica = {"replica": server.shared.replica} if server.shared is not None else {}

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", **replica})

    async def ready(request: Request) -> JSONResponse:
        if not getattr(request.app.state, "ready", False):
            return JSONResponse({"status": "starting", **replica}, status_code=503)
        if server.shared is not None and not await server.shared.ready():
            return JSONResponse({"status": "redis unreachable", **replica}, status_code=503)
        return JSONResponse({"status": "ready", **replica})

    return [Route(HEALTH_PATH, health, methods=["GET"]), Route(READY_PATH, ready, methods=["GET"])]
