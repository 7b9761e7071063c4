"""The ``toolsift`` command line."""

from .._public import publish
from ._app import main as main

__all__ = ["main"]

publish(globals(), __name__, __all__)
