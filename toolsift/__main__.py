"""``python -m toolsift``: the same as the ``toolsift`` command."""

from .cli._internal import main

main()
