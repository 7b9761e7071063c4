"""The ``toolsift`` command line."""

from ._app import app as app
from ._app import main as main

__all__ = ["app", "main"]
