"""The ``toolsift`` command line."""

from . import _auth, _chat, _demo, _inspect, _mcp, _serve, _skills, _trust_command  # noqa: F401  (each module registers its commands)
from ._app import app as app
from ._app import main as main

__all__ = ["app", "main"]
