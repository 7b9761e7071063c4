"""The ``toolsift`` command line."""

from .._public import publish
from ._app import main as main

__all__: list[str] = []  # main is the console script's entry point, not an API

publish(globals(), __name__, __all__)
